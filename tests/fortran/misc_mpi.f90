! misc_mpi: the rest of what Fortran users call, through `use mpi`: a user
! reduction op, MPI_Comm_get_attr(MPI_TAG_UB) with an ADDRESS_KIND value,
! MPI_Comm_split / dup / free, communicator names (strings both ways),
! MPI_Get_processor_name, MPI_Wtime / MPI_Wtick, MPI_Get_library_version,
! MPI_Dims_create and a periodic MPI_Cart_create with LOGICAL arrays.
module misc_mpi_util
  use mpi
  implicit none
contains
  subroutine check(cond, msg)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: msg
    integer :: ierr
    if (cond) return
    write (0, '(A,A)') 'fortran misc_mpi: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    stop 1
  end subroutine check

  ! A non-commutative op on pairs (a, b): affine maps x -> a*x + b composed,
  ! inoutvec = invec o inoutvec (MPI puts the lower ranks' part in invec).
  subroutine compose(invec, inoutvec, len, dtype)
    integer :: len, dtype
    integer :: invec(2, len), inoutvec(2, len)
    integer :: i, a, b
    call check(dtype == MPI_2INTEGER, 'user op called with another datatype')
    do i = 1, len
      a = inoutvec(1, i) * invec(1, i)
      b = invec(1, i) * inoutvec(2, i) + invec(2, i)
      inoutvec(1, i) = a
      inoutvec(2, i) = b
    end do
  end subroutine compose

  subroutine maxabs(invec, inoutvec, len, dtype)
    integer :: len, dtype
    double precision :: invec(len), inoutvec(len)
    call check(dtype == MPI_DOUBLE_PRECISION, 'maxabs called with another datatype')
    inoutvec = max(abs(invec), abs(inoutvec))
  end subroutine maxabs
end module misc_mpi_util

program misc_mpi
  use mpi
  use misc_mpi_util
  implicit none
  integer :: ierr, r, n, i, op, op2, half, sub, subr, subn, dup, res, nlen, major, minor
  integer :: cart, dims(2), coords(2), crank, left, right, ndims
  integer :: pair(2), acc(2), expect(2)
  integer(kind=MPI_ADDRESS_KIND) :: tag_ub
  double precision :: v(3), w(3), t0, t1
  logical :: flag, periods(2), cperiods(2)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_PROCESSOR_NAME) :: pname
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: lib

  call MPI_Init(ierr)
  t0 = MPI_Wtime()
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)

  ! Non-commutative user op: rank i contributes x -> 2x + i; the rank-order
  ! composition is f_0 o f_1 o ... o f_{n-1}.
  call MPI_Op_create(compose, .false., op, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Op_create')
  call MPI_Op_commutative(op, flag, ierr)
  call check(.not. flag, 'op is not commutative')
  pair = (/ 2, r /)
  call MPI_Allreduce(pair, acc, 1, MPI_2INTEGER, op, MPI_COMM_WORLD, ierr)
  expect = (/ 1, 0 /)
  do i = n - 1, 0, -1                     ! expect = f_i o expect, built from the right
    expect = (/ 2 * expect(1), 2 * expect(2) + i /)
  end do
  call check(all(acc == expect), 'non-commutative user op in rank order')
  call MPI_Reduce(pair, acc, 1, MPI_2INTEGER, op, n - 1, MPI_COMM_WORLD, ierr)
  if (r == n - 1) call check(all(acc == expect), 'user op reduce')
  call MPI_Op_free(op, ierr)
  call check(op == MPI_OP_NULL, 'MPI_Op_free')
  call MPI_Op_create(maxabs, .true., op2, ierr)
  v = (/ dble(-r), 0.5d0, dble(r) * 0.25d0 /)
  call MPI_Allreduce(v, w, 3, MPI_DOUBLE_PRECISION, op2, MPI_COMM_WORLD, ierr)
  call check(all(w == (/ dble(n - 1), 0.5d0, (n - 1) * 0.25d0 /)), 'commutative user op')
  call MPI_Op_free(op2, ierr)

  ! Attributes: MPI_TAG_UB is at least 32767, MPI_WTIME_IS_GLOBAL present.
  tag_ub = -1
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag, 'MPI_TAG_UB attribute missing')
  call check(tag_ub >= 32767, 'MPI_TAG_UB below 32767')
  call MPI_Send(r, 1, MPI_INTEGER, MPI_PROC_NULL, int(tag_ub), MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS, 'send with tag MPI_TAG_UB')

  ! Split into even and odd ranks, keys reversing the order.
  call MPI_Comm_split(MPI_COMM_WORLD, mod(r, 2), -r, sub, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_split')
  call MPI_Comm_rank(sub, subr, ierr)
  call MPI_Comm_size(sub, subn, ierr)
  half = (n + 1 - mod(r, 2)) / 2
  call check(subn == half, 'split size')
  call MPI_Allreduce(r, res, 1, MPI_INTEGER, MPI_MAX, sub, ierr)
  call check(subr == (res - r) / 2, 'split: keys reverse the order')
  call MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, dup, ierr)
  call check(dup == MPI_COMM_NULL, 'split with MPI_UNDEFINED')
  call MPI_Comm_free(sub, ierr)
  call check(sub == MPI_COMM_NULL, 'free of the split communicator')

  ! Dup, names, free.
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, nlen, ierr)
  call check(name(1:nlen) == 'MPI_COMM_WORLD', 'name of MPI_COMM_WORLD')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_compare(dup, MPI_COMM_WORLD, res, ierr)
  call check(res == MPI_CONGRUENT, 'dup is congruent')
  call MPI_Comm_set_name(dup, 'fortran dup   ', ierr)
  call MPI_Comm_get_name(dup, name, nlen, ierr)
  call check(name(1:nlen) == 'fortran dup' .and. nlen == 11, 'set_name/get_name (trailing blanks)')
  call check(name(nlen + 1:) == '', 'get_name pads with blanks')
  call MPI_Comm_free(dup, ierr)
  call check(dup == MPI_COMM_NULL, 'MPI_Comm_free')

  ! Processor name, library version, version.
  pname = '?'
  call MPI_Get_processor_name(pname, nlen, ierr)
  call check(nlen > 0 .and. nlen <= MPI_MAX_PROCESSOR_NAME, 'processor name length')
  call check(pname(nlen + 1:) == '', 'processor name is blank padded')
  call MPI_Get_library_version(lib, nlen, ierr)
  call check(ierr == MPI_SUCCESS .and. nlen > 0 .and. nlen <= MPI_MAX_LIBRARY_VERSION_STRING, &
             'MPI_Get_library_version')
  call MPI_Get_version(major, minor, ierr)
  call check(major >= 3, 'MPI_Get_version')

  ! Cartesian topology with LOGICAL periods.
  dims = 0
  call MPI_Dims_create(n, 2, dims, ierr)
  call check(dims(1) * dims(2) == n .and. dims(1) >= dims(2), 'MPI_Dims_create')
  periods = (/ .true., .false. /)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call check(ierr == MPI_SUCCESS .and. cart /= MPI_COMM_NULL, 'MPI_Cart_create')
  call MPI_Cartdim_get(cart, ndims, ierr)
  call check(ndims == 2, 'MPI_Cartdim_get')
  call MPI_Cart_get(cart, 2, dims, cperiods, coords, ierr)
  call check(cperiods(1) .and. .not. cperiods(2), 'MPI_Cart_get periods (LOGICAL)')
  call MPI_Cart_coords(cart, r, 2, coords, ierr)
  call check(coords(1) == r / dims(2) .and. coords(2) == mod(r, dims(2)), 'MPI_Cart_coords (row major)')
  call MPI_Cart_rank(cart, coords, crank, ierr)
  call check(crank == r, 'MPI_Cart_rank')
  call MPI_Cart_shift(cart, 0, 1, left, right, ierr)
  call check(left == mod(coords(1) - 1 + dims(1), dims(1)) * dims(2) + coords(2), 'shift periodic')
  call MPI_Cart_shift(cart, 1, 1, left, right, ierr)
  if (coords(2) == dims(2) - 1) call check(right == MPI_PROC_NULL, 'shift off a non-periodic edge')
  call MPI_Topo_test(cart, res, ierr)
  call check(res == MPI_CART, 'MPI_Topo_test')
  call MPI_Comm_free(cart, ierr)

  t1 = MPI_Wtime()
  call check(t1 >= t0 .and. MPI_Wtick() > 0d0 .and. MPI_Wtick() < 1d0, 'MPI_Wtime / MPI_Wtick')
  call MPI_Finalize(ierr)
  write (*, '(A)') 'fortran misc_mpi: checks passed'
end program misc_mpi
