! interfaces_mpi: the `mpi` module must declare every routine, its choice
! buffers accepting any type, kind and rank (MPI 3.0 and later). This file
! passes buffers of several types to the same routines, which gfortran 10 and
! newer reject without an explicit interface unless -fallow-argument-mismatch
! is given: test build.fortran_interfaces compiles it without that flag.
! It also covers MPI_F_sync_reg and MPI_Sizeof (Fortran-only routines).
program interfaces_mpi
  use mpi
  implicit none
  integer :: ierr, r, n, i, ibuf(4), sz
  integer(kind=MPI_ADDRESS_KIND) :: addr
  double precision :: dbuf(2, 3)
  real :: rscal
  complex :: zbuf(2)
  logical :: lbuf(3)
  character(len=6) :: cbuf

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  ibuf = 0
  dbuf = 0
  rscal = 0
  zbuf = (0.0, 0.0)
  lbuf = .false.
  cbuf = '      '
  if (r == 0) then
    ibuf = (/ 1, 2, 3, 4 /)
    dbuf = 2.5d0
    rscal = 1.5
    zbuf = (/ (1.0, -1.0), (0.5, 2.0) /)
    lbuf = (/ .true., .false., .true. /)
    cbuf = 'fmpi ok'
  end if
  call MPI_Bcast(ibuf, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(dbuf, 6, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(rscal, 1, MPI_REAL, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(zbuf, 2, MPI_COMPLEX, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(lbuf, 3, MPI_LOGICAL, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(cbuf, 6, MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  if (any(ibuf /= (/ 1, 2, 3, 4 /)) .or. any(dbuf /= 2.5d0) .or. rscal /= 1.5 .or. &
      zbuf(2) /= (0.5, 2.0) .or. .not. (lbuf(1) .and. .not. lbuf(2) .and. lbuf(3)) .or. &
      cbuf /= 'fmpi o') call fail('bcast of six types')
  call MPI_Allreduce(MPI_IN_PLACE, ibuf, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, dbuf, 6, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, lbuf, 3, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  if (ibuf(4) /= 4 * n .or. dbuf(2, 3) /= 2.5d0 * n .or. .not. lbuf(1) .or. lbuf(2)) &
    call fail('allreduce of three types')
  call MPI_Sendrecv(r, 1, MPI_INTEGER, mod(r + 1, n), 1, i, 1, MPI_INTEGER, &
                    mod(r + n - 1, n), 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (i /= mod(r + n - 1, n)) call fail('sendrecv of integers')
  dbuf(1, 1) = r
  call MPI_Sendrecv(dbuf(1, 1), 1, MPI_DOUBLE_PRECISION, mod(r + 1, n), 2, dbuf(1, 3), 1, &
                    MPI_DOUBLE_PRECISION, mod(r + n - 1, n), 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (dbuf(1, 3) /= mod(r + n - 1, n)) call fail('sendrecv of doubles')
  call MPI_Get_address(ibuf, addr, ierr)
  call MPI_Get_address(dbuf(2, 2), addr, ierr)
  call MPI_F_sync_reg(ibuf)
  call MPI_F_sync_reg(dbuf)
  call MPI_Sizeof(ibuf(1), sz, ierr)
  if (sz /= 4) call fail('MPI_Sizeof(integer)')
  call MPI_Sizeof(dbuf, sz, ierr)
  if (sz /= 8) call fail('MPI_Sizeof(double precision array)')
  call MPI_Sizeof(zbuf, sz, ierr)
  if (sz /= 8) call fail('MPI_Sizeof(complex)')
  call MPI_Finalize(ierr)
  write (*, '(A)') 'fortran interfaces_mpi: checks passed'

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: ierr2
    write (0, '(A,A)') 'fortran interfaces_mpi: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr2)
    stop 1
  end subroutine fail
end program interfaces_mpi
