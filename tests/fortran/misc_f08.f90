! misc_f08: `use mpi_f08` forms of a user op (TYPE(C_PTR) vectors), attributes
! (MPI_TAG_UB), split/dup/free, names, processor name, library version,
! MPI_Wtime, and MPI_Cart_create / MPI_Cart_get with LOGICAL arrays.
module misc_f08_util
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
contains
  subroutine check(cond, msg)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: msg
    if (cond) return
    write (0, '(A,A)') 'fortran misc_f08: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1)
    stop 1
  end subroutine check

  ! inoutvec = invec o inoutvec for affine maps (a, b): x -> a*x + b.
  subroutine compose(invec, inoutvec, len, dtype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: dtype
    integer, pointer :: x(:, :), y(:, :)
    integer :: i
    call check(dtype == MPI_2INTEGER, 'user op called with another datatype')
    call c_f_pointer(invec, x, (/ 2, len /))
    call c_f_pointer(inoutvec, y, (/ 2, len /))
    do i = 1, len
      y(2, i) = x(1, i) * y(2, i) + x(2, i)
      y(1, i) = x(1, i) * y(1, i)
    end do
  end subroutine compose
end module misc_f08_util

program misc_f08
  use mpi_f08
  use misc_f08_util
  implicit none
  integer :: ierr, r, n, i, res, nlen, subr, subn, crank
  integer :: pair(2), acc(2), expect(2), dims(2), coords(2)
  integer(kind=MPI_ADDRESS_KIND) :: tag_ub
  type(MPI_Op) :: op
  type(MPI_Comm) :: sub, dup, cart
  logical :: flag, periods(2), cperiods(2)
  double precision :: t0
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_PROCESSOR_NAME) :: pname
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: lib

  call MPI_Init()
  t0 = MPI_Wtime()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, n)

  call MPI_Op_create(compose, .false., op, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Op_create')
  pair = (/ 2, r /)
  call MPI_Allreduce(pair, acc, 1, MPI_2INTEGER, op, MPI_COMM_WORLD)
  expect = (/ 1, 0 /)
  do i = n - 1, 0, -1
    expect = (/ 2 * expect(1), 2 * expect(2) + i /)
  end do
  call check(all(acc == expect), 'non-commutative user op in rank order')
  call MPI_Op_free(op)
  call check(op == MPI_OP_NULL, 'MPI_Op_free')

  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag)
  call check(flag .and. tag_ub >= 32767, 'MPI_TAG_UB')

  call MPI_Comm_split(MPI_COMM_WORLD, mod(r, 2), -r, sub)
  call MPI_Comm_rank(sub, subr)
  call MPI_Comm_size(sub, subn)
  call check(subn == (n + 1 - mod(r, 2)) / 2, 'split size')
  call MPI_Allreduce(r, res, 1, MPI_INTEGER, MPI_MAX, sub)
  call check(subr == (res - r) / 2, 'split: keys reverse the order')
  call MPI_Comm_free(sub)
  call check(sub == MPI_COMM_NULL, 'free of the split communicator')

  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_set_name(dup, 'f08 dup')
  call MPI_Comm_get_name(dup, name, nlen)
  call check(name(1:nlen) == 'f08 dup' .and. name(nlen + 1:) == '', 'set_name/get_name')
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, nlen)
  call check(name(1:nlen) == 'MPI_COMM_WORLD', 'name of MPI_COMM_WORLD')
  call MPI_Comm_free(dup)

  call MPI_Get_processor_name(pname, nlen)
  call check(nlen > 0 .and. pname(nlen + 1:) == '', 'processor name')
  call MPI_Get_library_version(lib, nlen)
  call check(nlen > 0, 'library version')

  dims = 0
  call MPI_Dims_create(n, 2, dims)
  periods = (/ .false., .true. /)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .true., cart)
  call MPI_Cart_get(cart, 2, dims, cperiods, coords)
  call check(.not. cperiods(1) .and. cperiods(2), 'MPI_Cart_get periods (LOGICAL)')
  call MPI_Comm_rank(cart, crank)
  call MPI_Cart_coords(cart, crank, 2, coords)
  call check(coords(1) == crank / dims(2) .and. coords(2) == mod(crank, dims(2)), 'MPI_Cart_coords')
  call MPI_Cart_rank(cart, coords, res)
  call check(res == crank, 'MPI_Cart_rank')
  call MPI_Comm_free(cart)

  call check(MPI_Wtime() >= t0 .and. MPI_Wtick() > 0d0, 'MPI_Wtime / MPI_Wtick')
  call MPI_Finalize()
  write (*, '(A)') 'fortran misc_f08: checks passed'
end program misc_f08
