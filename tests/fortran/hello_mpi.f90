! hello_mpi: free form, `use mpi`. Every rank says who it is; the ranks' sum
! is checked with MPI_Allreduce and the size against EXPECT_SIZE when set.
program hello_mpi
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, isum, nlen, iexp, istat, major, minor
  character(len=MPI_MAX_PROCESSOR_NAME) :: pname
  character(len=16) :: envv

  call MPI_Init(ierr)
  if (ierr /= MPI_SUCCESS) stop 'hello_mpi: MPI_Init failed'
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Get_processor_name(pname, nlen, ierr)
  write (*, '(A,I0,A,I0,A,A)') 'Hello from rank ', rank, ' of ', nprocs, ' on ', pname(1:nlen)
  if (rank < 0 .or. rank >= nprocs) call fail('rank out of range')
  call MPI_Allreduce(rank, isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Allreduce failed')
  if (isum /= nprocs * (nprocs - 1) / 2) call fail('wrong rank sum')
  call MPI_Get_version(major, minor, ierr)
  if (major /= MPI_VERSION .or. minor /= MPI_SUBVERSION) call fail('MPI_Get_version /= MPI_VERSION')
  call get_environment_variable('EXPECT_SIZE', envv, status=istat)
  if (istat == 0) then
    read (envv, *) iexp
    if (iexp /= nprocs) call fail('size differs from EXPECT_SIZE')
  end if
  call MPI_Finalize(ierr)
  if (ierr /= MPI_SUCCESS) stop 'hello_mpi: MPI_Finalize failed'
  write (*, '(A)') 'fortran hello_mpi: checks passed'

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: ierr2
    write (0, '(A,A)') 'fortran hello_mpi: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr2)
    stop 1
  end subroutine fail
end program hello_mpi
