! p2p_f08: point-to-point with `use mpi_f08`: TYPE(MPI_Datatype/Request/
! Status) handles, status%MPI_SOURCE, ierror left out of most calls, derived
! datatypes (vector, struct), send/recv, isend/irecv/waitall, sendrecv,
! probe + get_count, MPI_STATUS(ES)_IGNORE, MPI_ANY_SOURCE / MPI_ANY_TAG.
module p2p_f08_util
  use mpi_f08
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
    if (cond) return
    write (0, '(A,A)') 'fortran p2p_f08: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1)
    stop 1
  end subroutine check
end module p2p_f08_util

program p2p_f08
  use mpi_f08
  use p2p_f08_util
  implicit none
  integer :: ierr, rank, nprocs, next, prev, i, j, cnt, src
  type(MPI_Status) :: status, statuses(4)
  type(MPI_Request) :: reqs(4)
  type(MPI_Datatype) :: rowtype, ptype, tmptype, types(2)
  integer :: blocklens(2)
  integer(kind=MPI_ADDRESS_KIND) :: displs(2), base, addr1, lb, extent
  double precision :: a(4, 5), row(5)
  type(particle) :: pout(2), pin(2)
  integer :: ibuf(10), jbuf(10), kbuf(10)
  integer, allocatable :: vbuf(:)
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  ! Vector type: one row of a 4x5 column-major array, to the next rank.
  call MPI_Type_vector(5, 1, 4, MPI_DOUBLE_PRECISION, rowtype, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Type_vector')
  call MPI_Type_commit(rowtype)
  call MPI_Type_size(rowtype, cnt)
  call check(cnt == 40, 'vector type size')
  do j = 1, 5
    do i = 1, 4
      a(i, j) = 1000 * rank + 10 * i + j
    end do
  end do
  row = -1
  call MPI_Irecv(row, 5, MPI_DOUBLE_PRECISION, prev, 11, MPI_COMM_WORLD, reqs(1))
  call MPI_Send(a(2, 1), 1, rowtype, next, 11, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Send with vector type')
  call MPI_Wait(reqs(1), status)
  call check(reqs(1) == MPI_REQUEST_NULL, 'request not freed by MPI_Wait')
  call check(status%MPI_SOURCE == prev .and. status%MPI_TAG == 11, 'vector status fields')
  call MPI_Get_count(status, MPI_DOUBLE_PRECISION, cnt)
  call check(cnt == 5, 'vector get_count')
  do j = 1, 5
    call check(row(j) == 1000 * prev + 20 + j, 'vector row contents')
  end do
  a = 0
  call MPI_Sendrecv(row, 5, MPI_DOUBLE_PRECISION, prev, 12, a(3, 1), 1, rowtype, next, 12, &
                    MPI_COMM_WORLD, status)
  call check(status%MPI_SOURCE == next .and. status%MPI_TAG == 12, 'sendrecv status')
  do j = 1, 5
    call check(a(3, j) == 1000 * rank + 20 + j .and. a(2, j) == 0, 'sendrecv into vector type')
  end do
  call MPI_Type_free(rowtype)
  call check(rowtype == MPI_DATATYPE_NULL, 'MPI_Type_free sets MPI_DATATYPE_NULL')

  ! Struct type for a BIND(C) derived type, resized to its array stride.
  call MPI_Get_address(pout(1), base)
  call MPI_Get_address(pout(1)%id, displs(1))
  call MPI_Get_address(pout(1)%x, displs(2))
  call MPI_Get_address(pout(2), addr1)
  displs(1) = MPI_Aint_diff(displs(1), base)
  displs(2) = MPI_Aint_diff(displs(2), base)
  blocklens = (/ 1, 3 /)
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
  call MPI_Type_create_struct(2, blocklens, displs, types, tmptype)
  call MPI_Type_create_resized(tmptype, 0_MPI_ADDRESS_KIND, MPI_Aint_diff(addr1, base), ptype)
  call MPI_Type_free(tmptype)
  call MPI_Type_commit(ptype)
  call MPI_Type_get_extent(ptype, lb, extent)
  call check(lb == 0 .and. extent == addr1 - base, 'struct extent')
  do i = 1, 2
    pout(i)%id = 100 * rank + i
    pout(i)%x = (/ rank + 0.5d0, dble(i), -1d0 * i /)
    pin(i)%id = -1
    pin(i)%x = 0
  end do
  call MPI_Irecv(pin, 2, ptype, prev, MPI_ANY_TAG, MPI_COMM_WORLD, reqs(1))
  call MPI_Send(pout, 2, ptype, next, 13, MPI_COMM_WORLD)
  call MPI_Wait(reqs(1), status)
  call check(status%MPI_SOURCE == prev .and. status%MPI_TAG == 13, 'struct status')
  call MPI_Get_count(status, ptype, cnt)
  call check(cnt == 2, 'struct get_count')
  do i = 1, 2
    call check(pin(i)%id == 100 * prev + i, 'struct id')
    call check(all(pin(i)%x == (/ prev + 0.5d0, dble(i), -1d0 * i /)), 'struct x')
  end do
  call MPI_Type_free(ptype)

  ! Blocking send/recv between 0 and 1 with MPI_ANY_SOURCE and MPI_STATUS_IGNORE.
  if (nprocs >= 2) then
    if (rank == 0) then
      ibuf = (/ (i * 3, i = 1, 10) /)
      call MPI_Send(ibuf, 10, MPI_INTEGER, 1, 21, MPI_COMM_WORLD)
      call MPI_Recv(jbuf, 10, MPI_INTEGER, 1, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call check(ierr == MPI_SUCCESS .and. all(jbuf == ibuf + 1), 'reply from rank 1')
    else if (rank == 1) then
      call MPI_Recv(jbuf, 10, MPI_INTEGER, MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, status)
      call check(status%MPI_SOURCE == 0 .and. status%MPI_TAG == 21, 'recv status')
      call MPI_Send(jbuf + 1, 10, MPI_INTEGER, 0, 22, MPI_COMM_WORLD)
    end if
  end if

  ! Isend/irecv both ways around the ring, waitall with statuses.
  ibuf = rank
  jbuf = -1
  kbuf = -1
  call MPI_Irecv(jbuf, 10, MPI_INTEGER, prev, 31, MPI_COMM_WORLD, reqs(1))
  call MPI_Irecv(kbuf, 10, MPI_INTEGER, next, 32, MPI_COMM_WORLD, reqs(2))
  call MPI_Isend(ibuf, 10, MPI_INTEGER, next, 31, MPI_COMM_WORLD, reqs(3))
  call MPI_Isend(ibuf, 5, MPI_INTEGER, prev, 32, MPI_COMM_WORLD, reqs(4))
  call MPI_Waitall(4, reqs, statuses, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Waitall')
  do i = 1, 4
    call check(reqs(i) == MPI_REQUEST_NULL, 'waitall frees requests')
  end do
  call check(statuses(1)%MPI_SOURCE == prev .and. statuses(1)%MPI_TAG == 31, 'waitall status 1')
  call check(statuses(2)%MPI_SOURCE == next .and. statuses(2)%MPI_TAG == 32, 'waitall status 2')
  call MPI_Get_count(statuses(2), MPI_INTEGER, cnt)
  call check(cnt == 5, 'get_count of statuses(2)')
  call check(all(jbuf == prev) .and. all(kbuf(1:5) == next) .and. all(kbuf(6:) == -1), &
             'isend/irecv contents')
  ibuf = ibuf + 7
  call MPI_Irecv(jbuf, 10, MPI_INTEGER, prev, 33, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(ibuf, 10, MPI_INTEGER, next, 33, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call check(all(jbuf == prev + 7), 'waitall with MPI_STATUSES_IGNORE')

  ! Probe + get_count: each rank sends rank+3 integers to the next.
  allocate (vbuf(rank + 3))
  vbuf = (/ (rank * 100 + i, i = 1, rank + 3) /)
  call MPI_Isend(vbuf, rank + 3, MPI_INTEGER, next, 41, MPI_COMM_WORLD, reqs(1))
  call MPI_Probe(MPI_ANY_SOURCE, 41, MPI_COMM_WORLD, status)
  call check(status%MPI_SOURCE == prev, 'probe source')
  call MPI_Get_count(status, MPI_INTEGER, cnt)
  call check(cnt == prev + 3, 'probe get_count')
  src = status%MPI_SOURCE
  block
    integer, allocatable :: rbuf(:)
    allocate (rbuf(cnt))
    call MPI_Recv(rbuf, cnt, MPI_INTEGER, src, status%MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call check(all(rbuf == (/ (prev * 100 + i, i = 1, cnt) /)), 'probed message contents')
  end block
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS, 'wait with MPI_STATUS_IGNORE')
  call MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, flag, status)
  call check(.not. flag, 'iprobe finds a message')

  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Finalize()
  write (*, '(A)') 'fortran p2p_f08: checks passed'
end program p2p_f08
