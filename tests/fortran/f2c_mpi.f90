! f2c_mpi: handles and statuses of `use mpi` go to C (f2c_c.c), which
! converts them with MPI_*_f2c, uses them and converts them back with
! MPI_*_c2f: comm, datatype, group, request, op (predefined and user), info,
! errhandler, and an INTEGER status through MPI_Status_f2c/c2f.
module f2c_mpi_util
  use mpi
  implicit none
contains
  subroutine check(cond, msg)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: msg
    integer :: ierr
    if (cond) return
    write (0, '(A,A)') 'fortran f2c_mpi: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    stop 1
  end subroutine check

  subroutine check_rc(rc, msg)
    integer, intent(in) :: rc
    character(len=*), intent(in) :: msg
    if (rc /= 0) write (0, '(A,A,I0)') msg, ': C check failed: ', rc
    call check(rc == 0, msg)
  end subroutine check_rc

  ! inoutvec = invec * inoutvec (a commutative user op).
  subroutine times(invec, inoutvec, len, dtype)
    integer :: len, dtype
    integer :: invec(len), inoutvec(len)
    call check(dtype == MPI_INTEGER, 'user op called with another datatype')
    inoutvec = invec * inoutvec
  end subroutine times
end module f2c_mpi_util

program f2c_mpi
  use mpi
  use f2c_iface
  use f2c_mpi_util
  implicit none
  integer :: ierr, r, n, sz, c2, t3, grp, req, op, info, src, cnt, tag, i, flag_len
  integer :: pre(12), st(MPI_STATUS_SIZE), st2(MPI_STATUS_SIZE)
  integer :: in(4), inout(4), buf(6)
  character(len=32) :: val
  character(kind=c_char) :: cval(32)
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)

  ! Predefined handles have the same Fortran values on both sides.
  call ft_predefined(pre)
  call check(pre(1) == MPI_COMM_WORLD .and. pre(2) == MPI_COMM_SELF .and. pre(3) == MPI_COMM_NULL, &
             'predefined communicators')
  call check(pre(4) == MPI_INTEGER .and. pre(5) == MPI_DOUBLE_PRECISION .and. &
             pre(6) == MPI_DATATYPE_NULL, 'predefined datatypes')
  call check(pre(7) == MPI_SUM .and. pre(12) == MPI_MAX, 'predefined ops')
  call check(pre(8) == MPI_GROUP_EMPTY .and. pre(9) == MPI_REQUEST_NULL .and. &
             pre(10) == MPI_INFO_NULL .and. pre(11) == MPI_ERRORS_RETURN, 'other predefined handles')

  ! Communicators both ways.
  call check_rc(ft_comm(MPI_COMM_WORLD, sz), 'comm world')
  call check(sz == n, 'size of MPI_COMM_WORLD in C')
  call check_rc(ft_comm(MPI_COMM_SELF, sz), 'comm self')
  call check(sz == 1, 'size of MPI_COMM_SELF in C')
  c2 = ft_comm_dup(MPI_COMM_WORLD)
  call check(c2 /= MPI_COMM_NULL .and. c2 /= MPI_COMM_WORLD, 'dup made in C')
  call MPI_Comm_size(c2, sz, ierr)
  call check(ierr == MPI_SUCCESS .and. sz == n, 'Fortran uses a communicator made in C')
  call MPI_Comm_get_name(c2, val, i, ierr)
  call check(val(1:i) == 'dup made in C', 'name set in C')
  call MPI_Allreduce(r, sz, 1, MPI_INTEGER, MPI_SUM, c2, ierr)
  call check(sz == n * (n - 1) / 2, 'allreduce on the C communicator')

  ! Datatypes: predefined, and one made in C from a Fortran one.
  call check_rc(ft_type(MPI_DOUBLE_PRECISION, sz), 'type double precision')
  call check(sz == 8, 'MPI_DOUBLE_PRECISION size in C')
  t3 = ft_type_contig(3, MPI_INTEGER)
  call MPI_Type_size(t3, sz, ierr)
  call check(ierr == MPI_SUCCESS .and. sz == 12, 'contiguous type made in C')
  buf = -1
  if (r == 0) buf = (/ 1, 2, 3, 4, 5, 6 /)
  call MPI_Bcast(buf, 2, t3, 0, c2, ierr)
  call check(all(buf == (/ 1, 2, 3, 4, 5, 6 /)), 'bcast with the C type')
  call check_rc(ft_type(t3, sz), 'type made in C, back in C')
  call MPI_Type_free(t3, ierr)

  ! Groups.
  call MPI_Comm_group(MPI_COMM_WORLD, grp, ierr)
  call check_rc(ft_group(grp, sz), 'group')
  call check(sz == n, 'group size in C')
  call MPI_Group_free(grp, ierr)
  call check_rc(ft_group(MPI_GROUP_EMPTY, sz), 'group empty')
  call check(sz == 0, 'MPI_GROUP_EMPTY size in C')

  ! Requests: made in Fortran, completed in C.
  buf = -1
  call MPI_Irecv(buf, 6, MPI_INTEGER, mod(r + n - 1, n), 7, c2, req, ierr)
  in = r
  call MPI_Send(in, 4, MPI_INTEGER, mod(r + 1, n), 7, c2, ierr)
  call check_rc(ft_request_wait(req, src, cnt), 'request')
  call check(req == MPI_REQUEST_NULL, 'C gave back MPI_REQUEST_NULL')
  call check(src == mod(r + n - 1, n) .and. cnt == 4 .and. all(buf(1:4) == src), 'request completed in C')

  ! Ops: predefined and a Fortran user op, applied by MPI_Reduce_local in C.
  in = (/ 1, 2, 3, 4 /)
  inout = (/ 10, 20, 30, 40 /)
  call check_rc(ft_op(MPI_SUM, in, inout, 4), 'op sum')
  call check(all(inout == (/ 11, 22, 33, 44 /)), 'MPI_SUM in C')
  call MPI_Op_create(times, .true., op, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Op_create')
  call check_rc(ft_op(op, in, inout, 4), 'user op')
  call check(all(inout == (/ 11, 44, 99, 176 /)), 'Fortran user op applied in C')
  call MPI_Op_free(op, ierr)
  call check(op == MPI_OP_NULL, 'op_free')

  ! Info: set in Fortran, read and extended in C, read back in Fortran.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'loomkey', 'fortran value', ierr)
  flag_len = 32
  call check_rc(ft_info(info, cval, flag_len), 'info')
  do i = 1, flag_len
    val(i:i) = cval(i)
  end do
  call check(val(1:flag_len) == 'fortran value', 'info value read in C')
  call MPI_Info_get_valuelen(info, 'fromc', i, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. i == 3, 'valuelen of the key set in C')
  val = 'x'
  call MPI_Info_get(info, 'fromc', len(val), val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. val == 'yes', 'info key set in C')
  call MPI_Info_free(info, ierr)

  call check_rc(ft_errhandler(MPI_ERRORS_RETURN), 'errhandler')

  ! A status from a Fortran receive, through MPI_Status_f2c and back.
  call MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN, ierr)
  buf = r
  call MPI_Sendrecv(buf, 3, MPI_INTEGER, mod(r + 1, n), 9, in, 4, MPI_INTEGER, &
                    mod(r + n - 1, n), MPI_ANY_TAG, c2, st, ierr)
  call check(ierr == MPI_SUCCESS, 'sendrecv')
  st2 = -99
  call check_rc(ft_status(st, st2, src, tag, cnt), 'status')
  call check(src == mod(r + n - 1, n) .and. tag == 9 .and. cnt == 3, 'status fields in C')
  call check(st2(MPI_SOURCE) == src .and. st2(MPI_TAG) == 9, 'status fields back in Fortran')
  call MPI_Get_count(st2, MPI_INTEGER, cnt, ierr)
  call check(cnt == 3, 'count of the converted status')

  call MPI_Comm_free(c2, ierr)
  call MPI_Finalize(ierr)
  write (*, '(A)') 'fortran f2c_mpi: checks passed'
end program f2c_mpi
