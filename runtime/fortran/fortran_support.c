// Conversions shared by the generated Fortran entry points (see
// fortran_support.h), and the mpi_f08 buffer helpers that read gfortran's
// array descriptors.
#include "fortran_support.h"

#include <ISO_Fortran_binding.h>
#include <stdio.h>

void *loom_f_alloc(int n, size_t size) {
  size_t count = n > 0 ? (size_t)n : 1;
  void *p = calloc(count, size);
  if (!p) {
    fprintf(stderr, "loom: Fortran binding: out of memory for %zu array elements\n", count);
    MPI_Abort(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
  }
  return p;
}

char *loom_f_str_in(const char *s, size_t len, int lead) {
  size_t b = 0, e = len;
  while (e > 0 && s[e - 1] == ' ') e--;
  if (lead)
    while (b < e && s[b] == ' ') b++;
  char *c = (char *)loom_f_alloc((int)(e - b + 1), 1);
  memcpy(c, s + b, e - b);
  c[e - b] = '\0';
  return c;
}

size_t loom_f_str_out_size(size_t len) {
  size_t least = MPI_MAX_LIBRARY_VERSION_STRING + 1;
  return (len + 1 > least ? len + 1 : least);
}

void loom_f_str_out(const char *c, char *f, size_t len) {
  size_t n = strlen(c);
  if (n > len) n = len;
  memcpy(f, c, n);
  memset(f + n, ' ', len - n);
}

int loom_f_peer_count(MPI_Comm comm, int flags) {
  int n = 0;
  if (flags & 2) {
    int topo = MPI_UNDEFINED;
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS) return 0;
    if (topo == MPI_CART) {
      int nd = 0;
      PMPI_Cartdim_get(comm, &nd);
      return 2 * nd;
    }
    if (topo == MPI_GRAPH) {
      int rank = 0;
      PMPI_Comm_rank(comm, &rank);
      PMPI_Graph_neighbors_count(comm, rank, &n);
      return n;
    }
    if (topo == MPI_DIST_GRAPH) {
      int in = 0, out = 0, weighted = 0;
      PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
      return (flags & 1) ? in : out;
    }
    return 0;
  }
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return 0;
  if (inter)
    PMPI_Comm_remote_size(comm, &n);
  else
    PMPI_Comm_size(comm, &n);
  return n;
}

int loom_f_cartdim(MPI_Comm comm) {
  int nd = 0;
  if (PMPI_Cartdim_get(comm, &nd) != MPI_SUCCESS) return 0;
  return nd;
}

// mpi_f08 choice buffers arrive as assumed-rank descriptors. A contiguous
// array (or a scalar) is used in place. A non-contiguous section (a(1:n:2))
// is copied into a contiguous temporary for a blocking call, and back out
// after it when the call writes the buffer; a nonblocking, persistent or
// one-sided call, or window memory (MPI_Win_create, MPI_Win_attach), cannot
// use a temporary (it outlives the call), so it gets MPI_ERR_BUFFER:
// MPI_SUBARRAYS_SUPPORTED is .FALSE.
enum { kIn = 1, kOut = 2, kLater = 4 };

static size_t elements(const CFI_cdesc_t *d) {
  size_t n = 1;
  for (int i = 0; i < d->rank; i++) n *= (size_t)d->dim[i].extent;
  return n;
}

// Visit the elements of d in array element order: copy to (gather) or from
// a packed buffer.
static void copy_section(const CFI_cdesc_t *d, char *packed, int gather) {
  size_t n = elements(d);
  CFI_index_t idx[CFI_MAX_RANK] = {0};
  for (size_t k = 0; k < n; k++) {
    char *elem = (char *)d->base_addr;
    for (int i = 0; i < d->rank; i++) elem += idx[i] * d->dim[i].sm;
    if (gather)
      memcpy(packed + k * d->elem_len, elem, d->elem_len);
    else
      memcpy(elem, packed + k * d->elem_len, d->elem_len);
    for (int i = 0; i < d->rank; i++) {
      if (++idx[i] < d->dim[i].extent) break;
      idx[i] = 0;
    }
  }
}

void *loom_f08_buffer(CFI_cdesc_t *d, int mode, void **tmp, int *ierr) {
  *tmp = NULL;
  *ierr = MPI_SUCCESS;
  if (!d->base_addr || d->rank == 0 || CFI_is_contiguous(d)) return d->base_addr;
  size_t n = elements(d);
  if (n == 0) return d->base_addr;
  if (mode & kLater) {
    fprintf(stderr,
            "loom: a non-contiguous array section was passed to a nonblocking, persistent or "
            "one-sided call, or as window memory (MPI_SUBARRAYS_SUPPORTED is .FALSE.): pass a "
            "contiguous array\n");
    *ierr = MPI_ERR_BUFFER;
    return NULL;
  }
  char *packed = (char *)malloc(n * d->elem_len);
  if (!packed) {
    *ierr = MPI_ERR_NO_MEM;
    return NULL;
  }
  if (mode & kIn) copy_section(d, packed, 1);
  *tmp = packed;
  return packed;
}

void loom_f08_leave(CFI_cdesc_t *d, void *tmp, int mode) {
  if (!tmp) return;
  if (mode & kOut) copy_section(d, (char *)tmp, 0);
  free(tmp);
}
