/*
 * fi_rma.c - the raw libfabric floor of one-sided communication: RMA write
 * and read latency between two processes of this host, no MPI.
 *
 * One invocation forks: the parent is the origin (the MPI programs' rank 0),
 * the child the target (rank 1).  Each opens its own RDM endpoint of the
 * provider given by -p (default "tcp;ofi_rxm"), after the fork.  The target
 * registers a buffer for remote read and write and passes its fi_getname
 * bytes, the MR key and the remote address to the origin over a socketpair;
 * then it only polls its CQ (progress is manual on these providers: without
 * that no read or write ever completes) until the origin, done, writes a
 * stop word into the same registered buffer.
 *
 *   put_lat  fi_writemsg of `size` bytes, then wait for its completion
 *            (FI_DELIVERY_COMPLETE: the data is in the target's memory,
 *            what MPI_Win_flush guarantees)                time per op (us)
 *   get_lat  fi_read of `size` bytes, then wait for its completion  (us)
 *
 * Options (those of bench/src/common.h where they exist):
 *   --op put_lat|get_lat (or as the first argument)   default put_lat
 *   -p PROVIDER       fabric_attr->prov_name          default "tcp;ofi_rxm"
 *   -d DOMAIN         domain (interface) name, e.g. eth0 or lo
 *   --completion dc|default   ask FI_DELIVERY_COMPLETE for writes (default
 *                     dc; falls back to the provider's default completion,
 *                     and says so on stderr, when no endpoint offers it)
 *   --min-size B, --max-size B (default 1..1M), --iters N, --warmup N,
 *   --check (verify data once per size before timing), --csv,
 *   --impl NAME (label in the output, default "libfabric"),
 *   --no-pin (default: origin on the first CPU of our affinity mask,
 *   target on the second, as bench/run pins rank 0 and rank 1)
 *
 * Output: the lines of bench/src/common.h's bench_emit, bench names
 * rma_put_lat / rma_get_lat, ranks 2, so bench/run files the rows beside
 * those of bench/src/rma.c.  A line on stderr says which provider, domain,
 * mr_mode and completion were used.
 *
 * Build: cc -O2 -std=c99 fi_rma.c -o fi_rma -lfabric   (libfabric-dev)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define STOP_WORD 0x73746f70u   /* "stop", written by the origin into the target's buffer */
#define MR_KEY 0x4c6f6f6dULL    /* requested key when the provider does not choose one */
#define NAME_MAX_BYTES 256

enum { PUT_LAT, GET_LAT };
static const char *op_names[] = { "put_lat", "get_lat" };

static struct {
    int op, check, csv, pin, want_dc;
    size_t min_size, max_size;
    int iters, warmup;
    const char *prov, *domain, *impl;
} o = { PUT_LAT, 0, 0, 1, 1, 1, 1u << 20, -1, -1, "tcp;ofi_rxm", NULL, "libfabric" };

static const char *who = "fi_rma";

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_ep *ep;
static struct fid_mr *mr;       /* the exposed buffer (target) or the local one (origin) */
static int dc_used;             /* FI_DELIVERY_COMPLETE in the write flags */

/* What the target tells the origin. */
struct boot {
    uint64_t key, addr;         /* remote key and address of the buffer's start */
    uint64_t mr_mode;
    uint32_t namelen, ok;
    unsigned char name[NAME_MAX_BYTES];
};

static void die(const char *what, int ret)
{
    fprintf(stderr, "%s: %s: %s (%d)\n", who, what, ret ? fi_strerror(-ret) : strerror(errno), ret);
    exit(1);
}

#define CHK(call)                                      \
    do {                                               \
        int ret_ = (int)(call);                        \
        if (ret_) die(#call, ret_);                    \
    } while (0)

static size_t parse_size(const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || v < 0) {
        fprintf(stderr, "%s: bad size '%s'\n", who, s);
        exit(2);
    }
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024.0; break;
    case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; break;
    default: break;
    }
    return (size_t)v;
}

/* bench_iters / bench_warmup of common.h */
static int iters_for(size_t size)
{
    if (o.iters > 0) return o.iters;
    return size <= 8192 ? 10000 : size <= 262144 ? 1000 : 100;
}
static int warmup_for(size_t size)
{
    if (o.warmup >= 0) return o.warmup;
    return size <= 8192 ? 1000 : 10;
}

/* bench_byte of common.h */
static unsigned char pat(int seed, size_t i)
{
    return (unsigned char)((seed * 131u + i * 7u + (i >> 8)) & 0xffu);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(const char *prog)
{
    printf("usage: %s [--op put_lat|get_lat] [-p PROVIDER] [-d DOMAIN] [--completion dc|default]\n"
           "       [--min-size B] [--max-size B] [--iters N] [--warmup N] [--check] [--csv]\n"
           "       [--impl NAME] [--no-pin]\n", prog);
}

static void parse_args(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (i == 1 && a[0] != '-') {
            if (!strcmp(a, "put_lat")) o.op = PUT_LAT;
            else if (!strcmp(a, "get_lat")) o.op = GET_LAT;
            else { fprintf(stderr, "%s: unknown mode '%s'\n", who, a); exit(2); }
            continue;
        }
        if (!strcmp(a, "--check")) { o.check = 1; continue; }
        if (!strcmp(a, "--csv")) { o.csv = 1; continue; }
        if (!strcmp(a, "--no-pin")) { o.pin = 0; continue; }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(argv[0]); exit(0); }
        if (!v) { fprintf(stderr, "%s: unknown or incomplete option '%s'\n", who, a); exit(2); }
        if (!strcmp(a, "--op")) {
            if (!strcmp(v, "put_lat")) o.op = PUT_LAT;
            else if (!strcmp(v, "get_lat")) o.op = GET_LAT;
            else { fprintf(stderr, "%s: unknown --op '%s' (put_lat, get_lat)\n", who, v); exit(2); }
        } else if (!strcmp(a, "-p")) o.prov = v;
        else if (!strcmp(a, "-d")) o.domain = v;
        else if (!strcmp(a, "--completion")) {
            if (!strcmp(v, "dc")) o.want_dc = 1;
            else if (!strcmp(v, "default")) o.want_dc = 0;
            else { fprintf(stderr, "%s: --completion dc|default\n", who); exit(2); }
        } else if (!strcmp(a, "--min-size")) o.min_size = parse_size(v);
        else if (!strcmp(a, "--max-size")) o.max_size = parse_size(v);
        else if (!strcmp(a, "--iters")) o.iters = atoi(v);
        else if (!strcmp(a, "--warmup")) o.warmup = atoi(v);
        else if (!strcmp(a, "--impl")) o.impl = v;
        else { fprintf(stderr, "%s: unknown option '%s'\n", who, a); exit(2); }
        i++;
    }
    if (o.min_size > o.max_size) o.max_size = o.min_size;
}

/* The n-th CPU (0 or 1) of the affinity mask we were started with. */
static void pin_to(int nth, const cpu_set_t *mask)
{
    int cpu, seen = 0;
    if (!o.pin || CPU_COUNT(mask) < 2) return;
    for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, mask)) continue;
        if (seen++ == nth) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            sched_setaffinity(0, sizeof one, &one);
            return;
        }
    }
}

/* ---- libfabric setup, the same for both sides ---- */

static struct fi_info *get_info(int dc)
{
    struct fi_info *hints = fi_allocinfo(), *list = NULL, *pick = NULL, *cur;
    int ret;
    if (!hints) die("fi_allocinfo", -FI_ENOMEM);
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                                  FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    if (dc) hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    hints->fabric_attr->prov_name = strdup(o.prov);
    if (o.domain) hints->domain_attr->name = strdup(o.domain);
    ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &list);
    fi_freeinfo(hints);
    if (ret) return NULL;
    /* IPv4 first (the name must be usable over 127.0.0.1/eth0), and the
     * domain asked for (the hint alone does not always filter). */
    for (cur = list; cur && !pick; cur = cur->next)
        if ((!o.domain || !strcmp(cur->domain_attr->name, o.domain)) &&
            (cur->addr_format != FI_SOCKADDR_IN6))
            pick = cur;
    if (!pick) pick = list;
    pick = fi_dupinfo(pick);
    fi_freeinfo(list);
    return pick;
}

static void open_endpoint(void)
{
    struct fi_cq_attr cq_attr;
    struct fi_av_attr av_attr;

    info = o.want_dc ? get_info(1) : NULL;
    dc_used = info != NULL;
    if (!info) info = get_info(0);
    if (!info) {
        fprintf(stderr, "%s: no RDM endpoint with RMA for provider '%s'%s%s\n", who, o.prov,
                o.domain ? " on domain " : "", o.domain ? o.domain : "");
        exit(1);
    }
    CHK(fi_fabric(info->fabric_attr, &fabric, NULL));
    CHK(fi_domain(fabric, info, &domain, NULL));
    memset(&cq_attr, 0, sizeof cq_attr);
    cq_attr.format = FI_CQ_FORMAT_CONTEXT;
    cq_attr.wait_obj = FI_WAIT_NONE;
    cq_attr.size = 128;
    CHK(fi_cq_open(domain, &cq_attr, &cq, NULL));
    memset(&av_attr, 0, sizeof av_attr);
    av_attr.type = FI_AV_TABLE;
    CHK(fi_av_open(domain, &av_attr, &av, NULL));
    CHK(fi_endpoint(domain, info, &ep, NULL));
    CHK(fi_ep_bind(ep, &av->fid, 0));
    CHK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    CHK(fi_enable(ep));
}

static void reg(void *buf, size_t len, uint64_t access, uint64_t key)
{
    CHK(fi_mr_reg(domain, buf, len, access, 0, key, 0, &mr, NULL));
    if (info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
        CHK(fi_mr_bind(mr, &ep->fid, 0));
        CHK(fi_mr_enable(mr));
    }
}

static void close_all(void)
{
    if (mr) fi_close(&mr->fid);
    fi_close(&ep->fid);
    fi_close(&av->fid);
    fi_close(&cq->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
}

/* One completion of ours; progress (and everything else) happens in here. */
static void wait_one(void)
{
    struct fi_cq_entry e;
    ssize_t n;
    for (;;) {
        n = fi_cq_read(cq, &e, 1);
        if (n == 1) return;
        if (n == -FI_EAGAIN) continue;
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err;
            memset(&err, 0, sizeof err);
            fi_cq_readerr(cq, &err, 0);
            fprintf(stderr, "%s: completion error: %s (prov_errno %d)\n", who,
                    fi_strerror(err.err), err.prov_errno);
            exit(1);
        }
        die("fi_cq_read", (int)n);
    }
}

/* ---- target (child) ---- */

static int run_target(int sock)
{
    size_t len = (o.max_size < 16 ? 16 : o.max_size) + 64, i;
    unsigned char *buf = NULL;
    volatile uint32_t *stop;
    struct boot b;
    size_t namelen = NAME_MAX_BYTES;
    unsigned long polls = 0;

    who = "fi_rma target";
    open_endpoint();
    if (posix_memalign((void **)&buf, 4096, len)) die("posix_memalign", 0);
    for (i = 0; i < len; i++) buf[i] = pat(21, i);   /* what get_lat --check expects */
    stop = (volatile uint32_t *)(void *)(buf + len - 64);
    *stop = 0;
    reg(buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, MR_KEY);

    memset(&b, 0, sizeof b);
    CHK(fi_getname(&ep->fid, b.name, &namelen));
    b.namelen = (uint32_t)namelen;
    b.key = fi_mr_key(mr);
    b.addr = (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)buf : 0;
    b.mr_mode = (uint64_t)info->domain_attr->mr_mode;
    b.ok = 1;
    if (write(sock, &b, sizeof b) != (ssize_t)sizeof b) die("write to origin", 0);

    /* Poll until the origin's stop word lands (or the origin goes away). */
    while (*stop != STOP_WORD) {
        struct fi_cq_entry e;
        ssize_t n = fi_cq_read(cq, &e, 1);
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err;
            memset(&err, 0, sizeof err);
            fi_cq_readerr(cq, &err, 0);
        }
        if (++polls % 1000000 == 0) {    /* rare: a dead origin is seen by EOF */
            char c;
            ssize_t r = recv(sock, &c, 1, MSG_DONTWAIT);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) break;
        }
    }
    /* Keep polling a little: the origin may still wait for the stop write's
     * delivery acknowledgement. */
    {
        double t = now();
        while (now() - t < 0.05) {
            struct fi_cq_entry e;
            fi_cq_read(cq, &e, 1);
        }
    }
    close_all();
    free(buf);
    return 0;
}

/* ---- origin (parent) ---- */

static fi_addr_t peer;
static struct boot tb;
static void *ldesc;
static struct fi_context2 ctx;

static void post_write(const void *src, size_t size, uint64_t off)
{
    struct iovec iov = { (void *)src, size };
    struct fi_rma_iov riov = { tb.addr + off, size, tb.key };
    struct fi_msg_rma msg;
    ssize_t r;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.desc = &ldesc;
    msg.iov_count = 1;
    msg.addr = peer;
    msg.rma_iov = &riov;
    msg.rma_iov_count = 1;
    msg.context = &ctx;
    while ((r = fi_writemsg(ep, &msg, FI_COMPLETION | (dc_used ? FI_DELIVERY_COMPLETE : 0))) ==
           -FI_EAGAIN)
        fi_cq_read(cq, NULL, 0);
    if (r) die("fi_writemsg", (int)r);
}

static void post_read(void *dst, size_t size, uint64_t off)
{
    ssize_t r;
    while ((r = fi_read(ep, dst, size, ldesc, peer, tb.addr + off, tb.key, &ctx)) == -FI_EAGAIN)
        fi_cq_read(cq, NULL, 0);
    if (r) die("fi_read", (int)r);
}

static int run_origin(int sock)
{
    size_t len = (o.max_size < 16 ? 16 : o.max_size) + 64, size, i;
    unsigned char *buf = NULL, *rbuf = NULL;
    char name[64];
    uint32_t stopw = STOP_WORD;
    ssize_t got = 0, r;

    who = "fi_rma origin";
    open_endpoint();
    if (posix_memalign((void **)&buf, 4096, len) || posix_memalign((void **)&rbuf, 4096, len))
        die("posix_memalign", 0);
    memset(buf, 1, len);
    memset(rbuf, 0, len);
    while (got < (ssize_t)sizeof tb) {
        r = read(sock, (char *)&tb + got, sizeof tb - got);
        if (r <= 0) { fprintf(stderr, "%s: the target did not start\n", who); return 1; }
        got += r;
    }
    if (!tb.ok) return 1;
    CHK(fi_av_insert(av, tb.name, 1, &peer, 0, NULL) == 1 ? 0 : -FI_EOTHER);
    /* FI_MR_LOCAL: one registration over both local buffers' pages would not
     * do; register buf (puts) or rbuf (gets), the only one timed. */
    if (info->domain_attr->mr_mode & FI_MR_LOCAL) {
        reg(o.op == PUT_LAT ? buf : rbuf, len, FI_READ | FI_WRITE, MR_KEY + 1);
        ldesc = fi_mr_desc(mr);
    }

    fprintf(stderr, "%s: provider %s, fabric %s, domain %s, mr_mode 0x%" PRIx64
            " (remote address = %s, key %s), writes complete with %s\n",
            who, info->fabric_attr->prov_name, info->fabric_attr->name, info->domain_attr->name,
            tb.mr_mode, (tb.mr_mode & FI_MR_VIRT_ADDR) ? "virtual address" : "offset",
            (tb.mr_mode & FI_MR_PROV_KEY) ? "from the provider" : "requested",
            dc_used ? "FI_DELIVERY_COMPLETE"
                    : (o.want_dc ? "the provider's default (FI_DELIVERY_COMPLETE not offered)"
                                 : "the provider's default (--completion default)"));
    snprintf(name, sizeof name, "rma_%s", op_names[o.op]);
    if (!o.csv)
        printf("# %s (%s, 2 ranks)\n# size(B)  time per operation\n", name, o.impl);

    for (size = o.min_size; size <= o.max_size; size = size ? size * 2 : 1) {
        int iters = iters_for(size), warm = warmup_for(size), it;
        double t0 = 0.0, t;
        if (size == 0) continue; /* no 0-byte RMA row (rma.c's sweep starts at 1 too) */
        if (o.check) {
            unsigned char *src = o.op == PUT_LAT ? buf : NULL;
            if (src) {
                for (i = 0; i < size; i++) src[i] = pat(17, i);
                post_write(src, size, 0);
                wait_one();
            }
            memset(rbuf, 0, size);
            post_read(rbuf, size, 0);
            wait_one();
            for (i = 0; i < size; i++)
                if (rbuf[i] != pat(src ? 17 : 21, i)) {
                    fprintf(stderr, "CHECK FAILED %s: %s byte %zu of %zu: got %u want %u\n", who,
                            name, i, size, rbuf[i], pat(src ? 17 : 21, i));
                    return 4;
                }
        }
        for (it = 0; it < warm + iters; it++) {
            if (it == warm) t0 = now();
            if (o.op == PUT_LAT) post_write(buf, size, 0);
            else post_read(rbuf, size, 0);
            wait_one();
        }
        t = now() - t0;
        if (o.csv)
            printf("%s,%s,%d,%zu,%.6g,%s\n", name, o.impl, 2, size, t * 1e6 / iters, "us");
        else
            printf("%-24s %10zu %14.3f %s\n", name, size, t * 1e6 / iters, "us");
        fflush(stdout);
    }

    /* Tell the target to stop: a write into the word past the data. */
    {
        struct fid_mr *data_mr = mr;
        void *data_desc = ldesc;
        if (info->domain_attr->mr_mode & FI_MR_LOCAL) {
            mr = NULL;
            reg(&stopw, sizeof stopw, FI_WRITE, MR_KEY + 2);
            ldesc = fi_mr_desc(mr);
        }
        post_write(&stopw, sizeof stopw, len - 64);
        wait_one();
        if (data_mr && data_mr != mr) fi_close(&data_mr->fid);
        (void)data_desc;
    }
    close_all();
    free(buf);
    free(rbuf);
    return 0;
}

int main(int argc, char **argv)
{
    int sv[2], status = 0, rc;
    cpu_set_t mask;
    pid_t pid;

    parse_args(argc, argv);
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask)) CPU_ZERO(&mask);
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) die("socketpair", 0);
    fflush(NULL);
    pid = fork();
    if (pid < 0) die("fork", 0);
    if (pid == 0) {
        close(sv[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        pin_to(1, &mask);
        rc = run_target(sv[1]);
        fflush(NULL);
        _exit(rc);
    }
    close(sv[1]);
    pin_to(0, &mask);
    rc = run_origin(sv[0]);
    if (rc) kill(pid, SIGKILL);
    close(sv[0]);
    if (waitpid(pid, &status, 0) == pid && !rc && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        fprintf(stderr, "fi_rma: the target failed (status 0x%x)\n", status);
        rc = 1;
    }
    return rc;
}
