! errh_f08: error handling through `use mpi_f08`. Under MPI_ERRORS_RETURN
! bad calls return codes with the right MPI_Error_class; a call without
! ierror returns too (no abort); a Fortran error handler made by
! MPI_Comm_create_errhandler gets TYPE(MPI_Comm) and the code; with Loom a
! non-contiguous section given to a nonblocking call is MPI_ERR_BUFFER.
module errh_f08_util
  use mpi_f08
  implicit none
  integer :: ncalls = 0, lastcode = -1
  type(MPI_Comm) :: lastcomm
contains
  subroutine handler(comm, code)
    type(MPI_Comm) :: comm
    integer :: code
    ncalls = ncalls + 1
    lastcomm = comm
    lastcode = code
  end subroutine handler

  subroutine check(cond, msg)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: msg
    if (cond) return
    write (0, '(A,A)') 'fortran errh_f08: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1)
    stop 1
  end subroutine check

  subroutine check_class(ierr, want, msg)
    integer, intent(in) :: ierr, want
    character(len=*), intent(in) :: msg
    integer :: cls, slen
    character(len=MPI_MAX_ERROR_STRING) :: str
    call check(ierr /= MPI_SUCCESS, msg // ' returned MPI_SUCCESS')
    call MPI_Error_class(ierr, cls)
    if (cls /= want) write (0, '(A,A,I0,A,I0)') msg, ': class ', cls, ', expected ', want
    call check(cls == want, msg // ': wrong error class')
    call MPI_Error_string(ierr, str, slen)
    call check(slen > 0 .and. slen <= MPI_MAX_ERROR_STRING, msg // ': MPI_Error_string')
  end subroutine check_class
end module errh_f08_util

program errh_f08
  use mpi_f08
  use errh_f08_util
  implicit none
  integer :: ierr, r, n, buf(4), res, nlen, sect(8)
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: lib
  type(MPI_Request) :: req
  type(MPI_Errhandler) :: eh
  type(MPI_Comm) :: c2

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  buf = r

  call MPI_Comm_get_errhandler(MPI_COMM_WORLD, eh)
  call check(eh == MPI_ERRORS_ARE_FATAL, 'default is MPI_ERRORS_ARE_FATAL')
  call MPI_Errhandler_free(eh)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_set_errhandler')
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)

  call MPI_Send(buf, 1, MPI_INTEGER, n, 0, MPI_COMM_WORLD, ierr)
  call check_class(ierr, MPI_ERR_RANK, 'send to rank n')
  call MPI_Recv(buf, 1, MPI_INTEGER, -7, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check_class(ierr, MPI_ERR_RANK, 'recv from rank -7')
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call check_class(ierr, MPI_ERR_COUNT, 'send count -1')
  call MPI_Send(buf, 1, MPI_INTEGER, 0, -3, MPI_COMM_WORLD, ierr)
  call check_class(ierr, MPI_ERR_TAG, 'send tag -3')
  call MPI_Bcast(buf, 1, MPI_INTEGER, n, MPI_COMM_WORLD, ierr)
  call check_class(ierr, MPI_ERR_ROOT, 'bcast root n')
  call MPI_Comm_size(MPI_COMM_NULL, res, ierr)
  call check_class(ierr, MPI_ERR_COMM, 'size of MPI_COMM_NULL')
  ! Without ierror: the call returns (MPI_ERRORS_RETURN), the job goes on.
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD)
  call MPI_Send(buf, 1, MPI_INTEGER, n, 0, MPI_COMM_WORLD)
  ! Loom refuses a non-contiguous section in a nonblocking call (its copy
  ! would not live as long as the operation; docs/fortran.md).
  call MPI_Get_library_version(lib, nlen)
  if (index(lib(1:nlen), 'Loom') > 0 .and. .not. MPI_SUBARRAYS_SUPPORTED) then
    sect = r
    call MPI_Isend(sect(1:8:2), 4, MPI_INTEGER, r, 0, MPI_COMM_WORLD, req, ierr)
    call check_class(ierr, MPI_ERR_BUFFER, 'isend of a non-contiguous section')
  end if
  call MPI_Allreduce(r, res, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. res == n * (n - 1) / 2, 'allreduce after errors')

  ! A user error handler on a duplicate of MPI_COMM_WORLD.
  call MPI_Comm_dup(MPI_COMM_WORLD, c2)
  call MPI_Comm_create_errhandler(handler, eh, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_create_errhandler')
  call MPI_Comm_set_errhandler(c2, eh)
  call MPI_Errhandler_free(eh)
  call check(eh == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free')
  call MPI_Send(buf, 1, MPI_INTEGER, n, 0, c2, ierr)
  call check(ncalls == 1, 'user handler not called once')
  call check(ierr == lastcode, 'the call returns the code the handler got')
  call check_class(lastcode, MPI_ERR_RANK, 'user handler code')
  call check(lastcomm == c2, 'user handler got another communicator')
  call MPI_Comm_compare(lastcomm, c2, res)
  call check(res == MPI_IDENT, 'handler communicator is not MPI_IDENT')
  ! Without ierror the handler is still called and the call returns.
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, c2)
  call check(ncalls == 2, 'handler not called for a call without ierror')
  call check_class(lastcode, MPI_ERR_COUNT, 'handler code for count -1')
  call MPI_Comm_call_errhandler(c2, MPI_ERR_OTHER, ierr)
  call check(ierr == MPI_SUCCESS .and. ncalls == 3 .and. lastcode == MPI_ERR_OTHER, &
             'MPI_Comm_call_errhandler')

  call MPI_Comm_free(c2)
  call check(c2 == MPI_COMM_NULL, 'comm_free')
  call MPI_Finalize()
  write (*, '(A)') 'fortran errh_f08: checks passed'
end program errh_f08
