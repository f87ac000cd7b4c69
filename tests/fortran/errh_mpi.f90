! errh_mpi: error handling through `use mpi`. Under MPI_ERRORS_RETURN bad
! calls return codes whose MPI_Error_class is the right class (rank, count,
! tag, root, comm); a Fortran error handler made by MPI_Comm_create_errhandler
! is called with the communicator and the code; user error classes/codes.
module errh_mpi_util
  use mpi
  implicit none
  integer :: ncalls = 0, lastcode = -1, lastcomm = -1
contains
  subroutine handler(comm, code)
    integer :: comm, code
    ncalls = ncalls + 1
    lastcomm = comm
    lastcode = code
  end subroutine handler

  subroutine check(cond, msg)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: msg
    integer :: ierr
    if (cond) return
    write (0, '(A,A)') 'fortran errh_mpi: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    stop 1
  end subroutine check

  ! The call failed and its code's class is want.
  subroutine check_class(ierr, want, msg)
    integer, intent(in) :: ierr, want
    character(len=*), intent(in) :: msg
    integer :: cls, ierr2, slen
    character(len=MPI_MAX_ERROR_STRING) :: str
    call check(ierr /= MPI_SUCCESS, msg // ' returned MPI_SUCCESS')
    call MPI_Error_class(ierr, cls, ierr2)
    call check(ierr2 == MPI_SUCCESS, msg // ': MPI_Error_class failed')
    if (cls /= want) write (0, '(A,A,I0,A,I0)') msg, ': class ', cls, ', expected ', want
    call check(cls == want, msg // ': wrong error class')
    call MPI_Error_string(ierr, str, slen, ierr2)
    call check(ierr2 == MPI_SUCCESS .and. slen > 0 .and. slen <= MPI_MAX_ERROR_STRING, &
               msg // ': MPI_Error_string')
  end subroutine check_class
end module errh_mpi_util

program errh_mpi
  use mpi
  use errh_mpi_util
  implicit none
  integer :: ierr, r, n, buf(4), eh, c2, res, cls, code, slen
  character(len=MPI_MAX_ERROR_STRING) :: str

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  buf = r

  call MPI_Comm_get_errhandler(MPI_COMM_WORLD, eh, ierr)
  call check(ierr == MPI_SUCCESS .and. eh == MPI_ERRORS_ARE_FATAL, 'default is MPI_ERRORS_ARE_FATAL')
  call MPI_Errhandler_free(eh, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_set_errhandler')
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_get_errhandler(MPI_COMM_WORLD, eh, ierr)
  call check(eh == MPI_ERRORS_RETURN, 'get_errhandler after set')
  call MPI_Errhandler_free(eh, ierr)

  ! Wrong arguments: the call returns and says why.
  call MPI_Send(buf, 1, MPI_INTEGER, n, 0, MPI_COMM_WORLD, ierr)
  call check_class(ierr, MPI_ERR_RANK, 'send to rank n')
  call MPI_Send(buf, 1, MPI_INTEGER, -7, 0, MPI_COMM_WORLD, ierr)
  call check_class(ierr, MPI_ERR_RANK, 'send to rank -7')
  call MPI_Recv(buf, 1, MPI_INTEGER, n + 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check_class(ierr, MPI_ERR_RANK, 'recv from rank n+3')
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call check_class(ierr, MPI_ERR_COUNT, 'send count -1')
  call MPI_Send(buf, 1, MPI_INTEGER, 0, -3, MPI_COMM_WORLD, ierr)
  call check_class(ierr, MPI_ERR_TAG, 'send tag -3')
  call MPI_Bcast(buf, 1, MPI_INTEGER, n, MPI_COMM_WORLD, ierr)
  call check_class(ierr, MPI_ERR_ROOT, 'bcast root n')
  call MPI_Comm_size(MPI_COMM_NULL, res, ierr)
  call check_class(ierr, MPI_ERR_COMM, 'size of MPI_COMM_NULL')
  call MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, ierr)
  call check_class(ierr, MPI_ERR_TYPE, 'send MPI_DATATYPE_NULL')
  ! Nothing is broken afterwards.
  call MPI_Allreduce(r, res, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. res == n * (n - 1) / 2, 'allreduce after errors')

  ! A user error handler written in Fortran, on a duplicate of MPI_COMM_WORLD.
  call MPI_Comm_dup(MPI_COMM_WORLD, c2, ierr)
  call MPI_Comm_create_errhandler(handler, eh, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_create_errhandler')
  call MPI_Comm_set_errhandler(c2, eh, ierr)
  call check(ierr == MPI_SUCCESS, 'set user errhandler')
  call MPI_Errhandler_free(eh, ierr)
  call check(ierr == MPI_SUCCESS .and. eh == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free')
  call MPI_Send(buf, 1, MPI_INTEGER, n, 0, c2, ierr)
  call check(ncalls == 1, 'user handler not called once')
  call check(ierr == lastcode, 'the call returns the code the handler got')
  call check_class(lastcode, MPI_ERR_RANK, 'user handler code')
  call check(lastcomm == c2, 'user handler got another communicator handle')
  call MPI_Comm_compare(lastcomm, c2, res, ierr)
  call check(res == MPI_IDENT, 'handler communicator is not MPI_IDENT')
  call MPI_Comm_call_errhandler(c2, MPI_ERR_OTHER, ierr)
  call check(ierr == MPI_SUCCESS .and. ncalls == 2 .and. lastcode == MPI_ERR_OTHER, &
             'MPI_Comm_call_errhandler')
  ! The world's handler is unchanged: no call of the user handler.
  call MPI_Send(buf, 1, MPI_INTEGER, n, 0, MPI_COMM_WORLD, ierr)
  call check(ierr /= MPI_SUCCESS .and. ncalls == 2, 'world handler changed by c2')

  ! User error classes, codes and strings.
  call MPI_Add_error_class(cls, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Add_error_class')
  call MPI_Add_error_code(cls, code, ierr)
  call MPI_Add_error_string(code, 'loom fortran test error', ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Add_error_string')
  call MPI_Error_class(code, res, ierr)
  call check(res == cls, 'class of a user code')
  call MPI_Error_string(code, str, slen, ierr)
  call check(str(1:slen) == 'loom fortran test error', 'string of a user code')
  call MPI_Comm_call_errhandler(c2, code, ierr)
  call check(ncalls == 3 .and. lastcode == code, 'call_errhandler with a user code')

  call MPI_Comm_free(c2, ierr)
  call check(ierr == MPI_SUCCESS .and. c2 == MPI_COMM_NULL, 'comm_free')
  call MPI_Finalize(ierr)
  write (*, '(A)') 'fortran errh_mpi: checks passed'
end program errh_mpi
