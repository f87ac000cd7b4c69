! p2p_mpi: point-to-point with `use mpi`: derived datatypes (vector, struct),
! send/recv, isend/irecv/waitall, sendrecv, probe + get_count, status fields,
! MPI_STATUS(ES)_IGNORE, MPI_ANY_SOURCE / MPI_ANY_TAG. Works at any size
! (a ring; with one rank every message goes to itself).
module p2p_mpi_util
  use mpi
  use, intrinsic :: iso_c_binding, only: c_int, c_double
  implicit none
  type, bind(c) :: particle
    integer(c_int) :: id
    real(c_double) :: x(3)
  end type particle
contains
  subroutine check(cond, msg)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: msg
    integer :: ierr
    if (cond) return
    write (0, '(A,A)') 'fortran p2p_mpi: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    stop 1
  end subroutine check
end module p2p_mpi_util

program p2p_mpi
  use mpi
  use p2p_mpi_util
  implicit none
  integer :: ierr, rank, nprocs, next, prev, i, j, cnt, src
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 4), reqs(4)
  integer :: rowtype, ptype, tmptype, blocklens(2), types(2)
  integer(kind=MPI_ADDRESS_KIND) :: displs(2), base, addr1, lb, extent
  double precision :: a(4, 5), row(5)
  type(particle) :: pout(2), pin(2)
  integer :: ibuf(10), jbuf(10), kbuf(10)
  integer, allocatable :: vbuf(:)
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  ! Vector type: one row of a 4x5 column-major array, to the next rank.
  call MPI_Type_vector(5, 1, 4, MPI_DOUBLE_PRECISION, rowtype, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Type_vector')
  call MPI_Type_commit(rowtype, ierr)
  call MPI_Type_size(rowtype, cnt, ierr)
  call check(cnt == 40, 'vector type size')
  do j = 1, 5
    do i = 1, 4
      a(i, j) = 1000 * rank + 10 * i + j
    end do
  end do
  row = -1
  call MPI_Irecv(row, 5, MPI_DOUBLE_PRECISION, prev, 11, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Send(a(2, 1), 1, rowtype, next, 11, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Send with vector type')
  call MPI_Wait(reqs(1), status, ierr)
  call check(reqs(1) == MPI_REQUEST_NULL, 'request not freed by MPI_Wait')
  call check(status(MPI_SOURCE) == prev .and. status(MPI_TAG) == 11, 'vector status fields')
  call MPI_Get_count(status, MPI_DOUBLE_PRECISION, cnt, ierr)
  call check(cnt == 5, 'vector get_count')
  do j = 1, 5
    call check(row(j) == 1000 * prev + 20 + j, 'vector row contents')
  end do
  ! And back: received as the vector type into a column-major row.
  a = 0
  call MPI_Sendrecv(row, 5, MPI_DOUBLE_PRECISION, prev, 12, a(3, 1), 1, rowtype, next, 12, &
                    MPI_COMM_WORLD, status, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Sendrecv')
  call check(status(MPI_SOURCE) == next .and. status(MPI_TAG) == 12, 'sendrecv status')
  do j = 1, 5
    call check(a(3, j) == 1000 * rank + 20 + j .and. a(2, j) == 0, 'sendrecv into vector type')
  end do
  call MPI_Type_free(rowtype, ierr)
  call check(rowtype == MPI_DATATYPE_NULL, 'MPI_Type_free sets MPI_DATATYPE_NULL')

  ! Struct type for a BIND(C) derived type, resized to its array stride.
  call MPI_Get_address(pout(1), base, ierr)
  call MPI_Get_address(pout(1)%id, displs(1), ierr)
  call MPI_Get_address(pout(1)%x, displs(2), ierr)
  call MPI_Get_address(pout(2), addr1, ierr)
  displs = displs - base
  blocklens = (/ 1, 3 /)
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
  call MPI_Type_create_struct(2, blocklens, displs, types, tmptype, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Type_create_struct')
  call MPI_Type_create_resized(tmptype, 0_MPI_ADDRESS_KIND, addr1 - base, ptype, ierr)
  call MPI_Type_free(tmptype, ierr)
  call MPI_Type_commit(ptype, ierr)
  call MPI_Type_get_extent(ptype, lb, extent, ierr)
  call check(lb == 0 .and. extent == addr1 - base, 'struct extent')
  do i = 1, 2
    pout(i)%id = 100 * rank + i
    pout(i)%x = (/ rank + 0.5d0, dble(i), -1d0 * i /)
    pin(i)%id = -1
    pin(i)%x = 0
  end do
  call MPI_Irecv(pin, 2, ptype, prev, MPI_ANY_TAG, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Send(pout, 2, ptype, next, 13, MPI_COMM_WORLD, ierr)
  call MPI_Wait(reqs(1), status, ierr)
  call check(status(MPI_SOURCE) == prev .and. status(MPI_TAG) == 13, 'struct status')
  call MPI_Get_count(status, ptype, cnt, ierr)
  call check(cnt == 2, 'struct get_count')
  do i = 1, 2
    call check(pin(i)%id == 100 * prev + i, 'struct id')
    call check(all(pin(i)%x == (/ prev + 0.5d0, dble(i), -1d0 * i /)), 'struct x')
  end do
  call MPI_Type_free(ptype, ierr)

  ! Blocking send/recv between 0 and 1 with MPI_ANY_SOURCE and MPI_STATUS_IGNORE.
  if (nprocs >= 2) then
    if (rank == 0) then
      ibuf = (/ (i * 3, i = 1, 10) /)
      call MPI_Send(ibuf, 10, MPI_INTEGER, 1, 21, MPI_COMM_WORLD, ierr)
      call MPI_Recv(jbuf, 10, MPI_INTEGER, 1, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call check(ierr == MPI_SUCCESS .and. all(jbuf == ibuf + 1), 'reply from rank 1')
    else if (rank == 1) then
      call MPI_Recv(jbuf, 10, MPI_INTEGER, MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, status, ierr)
      call check(status(MPI_SOURCE) == 0 .and. status(MPI_TAG) == 21, 'recv status')
      call MPI_Send(jbuf + 1, 10, MPI_INTEGER, 0, 22, MPI_COMM_WORLD, ierr)
    end if
  end if

  ! Isend/irecv both ways around the ring, waitall with statuses.
  ibuf = rank
  jbuf = -1
  kbuf = -1
  call MPI_Irecv(jbuf, 10, MPI_INTEGER, prev, 31, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Irecv(kbuf, 10, MPI_INTEGER, next, 32, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Isend(ibuf, 10, MPI_INTEGER, next, 31, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Isend(ibuf, 5, MPI_INTEGER, prev, 32, MPI_COMM_WORLD, reqs(4), ierr)
  call MPI_Waitall(4, reqs, statuses, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Waitall')
  call check(all(reqs == MPI_REQUEST_NULL), 'waitall frees requests')
  call check(statuses(MPI_SOURCE, 1) == prev .and. statuses(MPI_TAG, 1) == 31, 'waitall status 1')
  call check(statuses(MPI_SOURCE, 2) == next .and. statuses(MPI_TAG, 2) == 32, 'waitall status 2')
  call MPI_Get_count(statuses(:, 2), MPI_INTEGER, cnt, ierr)
  call check(cnt == 5, 'get_count of a status column')
  call check(all(jbuf == prev) .and. all(kbuf(1:5) == next) .and. all(kbuf(6:) == -1), &
             'isend/irecv contents')
  ! The same with MPI_STATUSES_IGNORE.
  call MPI_Irecv(jbuf, 10, MPI_INTEGER, prev, 33, MPI_COMM_WORLD, reqs(1), ierr)
  ibuf = ibuf + 7
  call MPI_Isend(ibuf, 10, MPI_INTEGER, next, 33, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. all(jbuf == prev + 7), 'waitall with MPI_STATUSES_IGNORE')

  ! Probe + get_count: each rank sends rank+3 integers to the next.
  allocate (vbuf(rank + 3))
  vbuf = (/ (rank * 100 + i, i = 1, rank + 3) /)
  call MPI_Isend(vbuf, rank + 3, MPI_INTEGER, next, 41, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Probe(MPI_ANY_SOURCE, 41, MPI_COMM_WORLD, status, ierr)
  call check(ierr == MPI_SUCCESS .and. status(MPI_SOURCE) == prev, 'probe source')
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  call check(cnt == prev + 3, 'probe get_count')
  src = status(MPI_SOURCE)
  deallocate (vbuf)
  allocate (vbuf(cnt))
  call MPI_Recv(vbuf, cnt, MPI_INTEGER, src, status(MPI_TAG), MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all(vbuf == (/ (prev * 100 + i, i = 1, cnt) /)), 'probed message contents')
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS, 'wait with MPI_STATUS_IGNORE')
  ! Iprobe finds nothing left.
  call MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, flag, status, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. flag, 'iprobe finds a message')

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  write (*, '(A)') 'fortran p2p_mpi: checks passed'
end program p2p_mpi
