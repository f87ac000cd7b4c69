! hello_f08: `use mpi_f08`, handles as TYPE(MPI_Comm), ierror left out.
! Every rank says who it is; the ranks' sum is checked with MPI_Allreduce and
! the size against EXPECT_SIZE when set.
program hello_f08
  use mpi_f08
  implicit none
  integer :: ierr, rank, nprocs, isum, nlen, iexp, istat
  character(len=MPI_MAX_PROCESSOR_NAME) :: pname
  character(len=16) :: envv
  type(MPI_Comm) :: world
  logical :: flag

  call MPI_Init()
  call MPI_Initialized(flag, ierr)
  if (.not. flag .or. ierr /= MPI_SUCCESS) stop 'hello_f08: MPI_Initialized'
  world = MPI_COMM_WORLD
  call MPI_Comm_rank(world, rank)
  call MPI_Comm_size(world, nprocs, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Comm_size failed')
  call MPI_Get_processor_name(pname, nlen)
  write (*, '(A,I0,A,I0,A,A)') 'Hello from rank ', rank, ' of ', nprocs, ' on ', pname(1:nlen)
  if (rank < 0 .or. rank >= nprocs) call fail('rank out of range')
  if (world /= MPI_COMM_WORLD .or. world == MPI_COMM_SELF) call fail('handle comparison')
  call MPI_Allreduce(rank, isum, 1, MPI_INTEGER, MPI_SUM, world)
  if (isum /= nprocs * (nprocs - 1) / 2) call fail('wrong rank sum')
  call get_environment_variable('EXPECT_SIZE', envv, status=istat)
  if (istat == 0) then
    read (envv, *) iexp
    if (iexp /= nprocs) call fail('size differs from EXPECT_SIZE')
  end if
  call MPI_Finalize()
  write (*, '(A)') 'fortran hello_f08: checks passed'

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    write (0, '(A,A)') 'fortran hello_f08: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1)
    stop 1
  end subroutine fail
end program hello_f08
