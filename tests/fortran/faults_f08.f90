! faults_f08: how a Fortran rank ends a job. Argument "abort": the last rank
! calls MPI_Abort(MPI_COMM_WORLD, 7); "error-stop": the last rank executes
! ERROR STOP 3 without MPI_Finalize. The others wait in a barrier; loomrun
! must end the job with the rank's code and say why.
program faults_f08
  use mpi_f08
  implicit none
  integer :: r, n
  character(len=16) :: mode
  call get_command_argument(1, mode)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  if (r == n - 1) then
    if (mode == 'abort') call MPI_Abort(MPI_COMM_WORLD, 7)
    if (mode == 'error-stop') error stop 3
  end if
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Finalize()
  write (*, '(A)') 'fortran faults_f08: no fault requested'
end program faults_f08
