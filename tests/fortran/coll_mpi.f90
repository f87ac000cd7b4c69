! coll_mpi: every collective through `use mpi`, each also with MPI_IN_PLACE
! where the standard allows it, and a few nonblocking ones with MPI_Wait.
! Any size works; roots are chosen away from rank 0 where that matters.
module coll_mpi_util
  use mpi
  implicit none
contains
  subroutine check(cond, msg)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: msg
    integer :: ierr
    if (cond) return
    write (0, '(A,A)') 'fortran coll_mpi: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    stop 1
  end subroutine check
end module coll_mpi_util

program coll_mpi
  use mpi
  use coll_mpi_util
  implicit none
  integer, parameter :: W = MPI_COMM_WORLD
  integer :: ierr, r, n, i, j, k, root, tot
  integer :: a(10), b(10), req, reqs(4)
  double precision :: d(3), e(3)
  integer, allocatable :: s(:), t(:), scnt(:), sdsp(:), rcnt(:), rdsp(:), typs(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(W, r, ierr)
  call MPI_Comm_size(W, n, ierr)
  allocate (s(4 * n * n + 4 * n), t(4 * n * n + 4 * n))
  allocate (scnt(n), sdsp(n), rcnt(n), rdsp(n), typs(n))

  ! Bcast from the last rank.
  root = n - 1
  a = -1
  if (r == root) a = (/ (i * 7, i = 1, 10) /)
  call MPI_Bcast(a, 10, MPI_INTEGER, root, W, ierr)
  call check(ierr == MPI_SUCCESS .and. all(a == (/ (i * 7, i = 1, 10) /)), 'bcast')

  ! Reduce to rank n/2, then in place at the root.
  root = n / 2
  a = (/ ((r + 1) * i, i = 1, 10) /)
  b = -1
  call MPI_Reduce(a, b, 10, MPI_INTEGER, MPI_SUM, root, W, ierr)
  if (r == root) call check(all(b == (/ (i * n * (n + 1) / 2, i = 1, 10) /)), 'reduce')
  if (r == root) then
    call MPI_Reduce(MPI_IN_PLACE, a, 10, MPI_INTEGER, MPI_SUM, root, W, ierr)
    call check(all(a == (/ (i * n * (n + 1) / 2, i = 1, 10) /)), 'reduce in place')
  else
    call MPI_Reduce(a, b, 10, MPI_INTEGER, MPI_SUM, root, W, ierr)
  end if

  ! Allreduce: sum, max on doubles, in place.
  d = (/ dble(r), dble(-r), 0.5d0 /)
  call MPI_Allreduce(d, e, 3, MPI_DOUBLE_PRECISION, MPI_MAX, W, ierr)
  call check(all(e == (/ dble(n - 1), 0d0, 0.5d0 /)), 'allreduce max')
  call MPI_Allreduce(MPI_IN_PLACE, d, 3, MPI_DOUBLE_PRECISION, MPI_SUM, W, ierr)
  call check(all(d == (/ dble(n * (n - 1) / 2), -dble(n * (n - 1) / 2), 0.5d0 * n /)), &
             'allreduce sum in place')

  ! Gather two values per rank to the last rank; gatherv r+1 values, in place.
  root = n - 1
  t = -1
  call MPI_Gather((/ r, 10 * r /), 2, MPI_INTEGER, t, 2, MPI_INTEGER, root, W, ierr)
  if (r == root) then
    do i = 0, n - 1
      call check(t(2 * i + 1) == i .and. t(2 * i + 2) == 10 * i, 'gather')
    end do
  end if
  do i = 1, n
    rcnt(i) = i
    rdsp(i) = (i - 1) * i / 2 + (i - 1)       ! one hole between the blocks
  end do
  s(1:r + 1) = r
  t = -1
  if (r == root) then
    t(rdsp(r + 1) + 1:rdsp(r + 1) + r + 1) = r
    call MPI_Gatherv(MPI_IN_PLACE, 0, MPI_INTEGER, t, rcnt, rdsp, MPI_INTEGER, root, W, ierr)
    do i = 0, n - 1
      call check(all(t(rdsp(i + 1) + 1:rdsp(i + 1) + i + 1) == i), 'gatherv in place')
      if (i > 0) call check(t(rdsp(i + 1)) == -1, 'gatherv wrote into a hole')
    end do
  else
    call MPI_Gatherv(s, r + 1, MPI_INTEGER, t, rcnt, rdsp, MPI_INTEGER, root, W, ierr)
  end if

  ! Scatter from rank 0, then in place at the root; scatterv r+1 values.
  root = 0
  if (r == root) s(1:2 * n) = (/ (i, i = 1, 2 * n) /)
  a = -1
  call MPI_Scatter(s, 2, MPI_INTEGER, a, 2, MPI_INTEGER, root, W, ierr)
  call check(a(1) == 2 * r + 1 .and. a(2) == 2 * r + 2 .and. a(3) == -1, 'scatter')
  if (r == root) then
    call MPI_Scatter(s, 2, MPI_INTEGER, MPI_IN_PLACE, 2, MPI_INTEGER, root, W, ierr)
    call check(all(s(1:2 * n) == (/ (i, i = 1, 2 * n) /)), 'scatter in place')
  else
    a = -1
    call MPI_Scatter(s, 2, MPI_INTEGER, a, 2, MPI_INTEGER, root, W, ierr)
    call check(a(1) == 2 * r + 1 .and. a(2) == 2 * r + 2, 'scatter (root in place)')
  end if
  if (r == root) then
    do i = 0, n - 1
      s(rdsp(i + 1) + 1:rdsp(i + 1) + i + 1) = 50 + i
    end do
  end if
  t = -1
  call MPI_Scatterv(s, rcnt, rdsp, MPI_INTEGER, t, r + 1, MPI_INTEGER, root, W, ierr)
  call check(all(t(1:r + 1) == 50 + r) .and. t(r + 2) == -1, 'scatterv')

  ! Allgather, plain and in place; allgatherv in place.
  t = -1
  call MPI_Allgather((/ r + 1 /), 1, MPI_INTEGER, t, 1, MPI_INTEGER, W, ierr)
  call check(all(t(1:n) == (/ (i, i = 1, n) /)), 'allgather')
  t = -1
  t(2 * r + 1:2 * r + 2) = (/ r, -r /)
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, t, 2, MPI_INTEGER, W, ierr)
  do i = 0, n - 1
    call check(t(2 * i + 1) == i .and. t(2 * i + 2) == -i, 'allgather in place')
  end do
  t = -1
  t(rdsp(r + 1) + 1:rdsp(r + 1) + r + 1) = 3 * r
  call MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, t, rcnt, rdsp, MPI_INTEGER, W, ierr)
  do i = 0, n - 1
    call check(all(t(rdsp(i + 1) + 1:rdsp(i + 1) + i + 1) == 3 * i), 'allgatherv in place')
  end do

  ! Alltoall: block j holds 100*r+j; in place as well.
  s(1:n) = (/ (100 * r + j, j = 0, n - 1) /)
  t = -1
  call MPI_Alltoall(s, 1, MPI_INTEGER, t, 1, MPI_INTEGER, W, ierr)
  call check(all(t(1:n) == (/ (100 * j + r, j = 0, n - 1) /)), 'alltoall')
  call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, 1, MPI_INTEGER, W, ierr)
  call check(all(s(1:n) == (/ (100 * j + r, j = 0, n - 1) /)), 'alltoall in place')

  ! Alltoallv / alltoallw with symmetric counts r+j+1 (so in place works too).
  tot = 0
  do j = 0, n - 1
    scnt(j + 1) = r + j + 1
    sdsp(j + 1) = tot
    tot = tot + r + j + 1
  end do
  do j = 0, n - 1
    s(sdsp(j + 1) + 1:sdsp(j + 1) + scnt(j + 1)) = 1000 * r + j
  end do
  t = -1
  call MPI_Alltoallv(s, scnt, sdsp, MPI_INTEGER, t, scnt, sdsp, MPI_INTEGER, W, ierr)
  do j = 0, n - 1
    call check(all(t(sdsp(j + 1) + 1:sdsp(j + 1) + scnt(j + 1)) == 1000 * j + r), 'alltoallv')
  end do
  call MPI_Alltoallv(MPI_IN_PLACE, scnt, sdsp, MPI_DATATYPE_NULL, s, scnt, sdsp, MPI_INTEGER, W, ierr)
  do j = 0, n - 1
    call check(all(s(sdsp(j + 1) + 1:sdsp(j + 1) + scnt(j + 1)) == 1000 * j + r), &
               'alltoallv in place')
  end do
  typs = MPI_INTEGER
  rdsp = 4 * sdsp                               ! alltoallw displacements are in bytes
  t = -1
  call MPI_Alltoallw(s, scnt, rdsp, typs, t, scnt, rdsp, typs, W, ierr)
  do j = 0, n - 1
    call check(all(t(sdsp(j + 1) + 1:sdsp(j + 1) + scnt(j + 1)) == 1000 * r + j), 'alltoallw')
  end do
  call MPI_Alltoallw(MPI_IN_PLACE, scnt, rdsp, typs, t, scnt, rdsp, typs, W, ierr)
  do j = 0, n - 1
    call check(all(t(sdsp(j + 1) + 1:sdsp(j + 1) + scnt(j + 1)) == 1000 * j + r), &
               'alltoallw in place')
  end do

  ! Reduce_scatter: rank i gets i+1 sums; reduce_scatter_block 2 each; in place.
  tot = n * (n + 1) / 2
  s(1:tot) = (/ (r + i, i = 1, tot) /)
  rcnt = (/ (i, i = 1, n) /)
  t = -1
  call MPI_Reduce_scatter(s, t, rcnt, MPI_INTEGER, MPI_SUM, W, ierr)
  k = r * (r + 1) / 2                           ! first element of my block
  call check(all(t(1:r + 1) == (/ (n * (k + i) + n * (n - 1) / 2, i = 1, r + 1) /)), &
             'reduce_scatter')
  call MPI_Reduce_scatter(MPI_IN_PLACE, s, rcnt, MPI_INTEGER, MPI_SUM, W, ierr)
  call check(all(s(1:r + 1) == t(1:r + 1)), 'reduce_scatter in place')
  s(1:2 * n) = (/ (r * i, i = 1, 2 * n) /)
  call MPI_Reduce_scatter_block(s, t, 2, MPI_INTEGER, MPI_SUM, W, ierr)
  call check(t(1) == (2 * r + 1) * n * (n - 1) / 2 .and. t(2) == (2 * r + 2) * n * (n - 1) / 2, &
             'reduce_scatter_block')
  call MPI_Reduce_scatter_block(MPI_IN_PLACE, s, 2, MPI_INTEGER, MPI_SUM, W, ierr)
  call check(s(1) == t(1) .and. s(2) == t(2), 'reduce_scatter_block in place')

  ! Scan and exscan, plain and in place.
  a(1) = r + 1
  call MPI_Scan(a, b, 1, MPI_INTEGER, MPI_SUM, W, ierr)
  call check(b(1) == (r + 1) * (r + 2) / 2, 'scan')
  call MPI_Scan(MPI_IN_PLACE, a, 1, MPI_INTEGER, MPI_SUM, W, ierr)
  call check(a(1) == b(1), 'scan in place')
  a(1) = r + 1
  b(1) = -5
  call MPI_Exscan(a, b, 1, MPI_INTEGER, MPI_SUM, W, ierr)
  if (r > 0) call check(b(1) == r * (r + 1) / 2, 'exscan')
  call MPI_Exscan(MPI_IN_PLACE, a, 1, MPI_INTEGER, MPI_SUM, W, ierr)
  if (r > 0) call check(a(1) == r * (r + 1) / 2, 'exscan in place')

  call MPI_Barrier(W, ierr)
  call check(ierr == MPI_SUCCESS, 'barrier')

  ! Nonblocking: ibcast + wait, iallreduce in place + wait, ialltoall, ibarrier.
  a = 0
  if (r == 0) a = 42
  call MPI_Ibcast(a, 10, MPI_INTEGER, 0, W, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check(all(a == 42) .and. req == MPI_REQUEST_NULL, 'ibcast')
  b = r
  call MPI_Iallreduce(MPI_IN_PLACE, b, 10, MPI_INTEGER, MPI_SUM, W, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check(all(b == n * (n - 1) / 2), 'iallreduce in place')
  s(1:n) = (/ (100 * r + j, j = 0, n - 1) /)
  call MPI_Ialltoall(s, 1, MPI_INTEGER, t, 1, MPI_INTEGER, W, reqs(1), ierr)
  call MPI_Igather(r, 1, MPI_INTEGER, s(n + 1), 1, MPI_INTEGER, 0, W, reqs(2), ierr)
  call MPI_Ibarrier(W, reqs(3), ierr)
  call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(all(t(1:n) == (/ (100 * j + r, j = 0, n - 1) /)), 'ialltoall')
  if (r == 0) call check(all(s(n + 1:2 * n) == (/ (j, j = 0, n - 1) /)), 'igather')

  call MPI_Finalize(ierr)
  write (*, '(A)') 'fortran coll_mpi: checks passed'
end program coll_mpi
