! rma_mpi: one-sided communication through `use mpi`: MPI_Win_allocate
! (INTEGER(KIND=MPI_ADDRESS_KIND) base; the TYPE(C_PTR) form for the shared
! window) with a put ring under fences, MPI_Win_create on an array
! with MPI_Get, MPI_Accumulate MPI_SUM from every rank (exact), a
! fetch-and-op counter under MPI_Win_lock/unlock, MPI_Win_allocate_shared +
! MPI_Win_shared_query, the predefined window attributes (MPI_WIN_BASE, SIZE,
! DISP_UNIT, CREATE_FLAVOR, MODEL), a user keyval whose Fortran delete
! callback runs at MPI_Win_free, MPI_WIN_DUP_FN / MPI_WIN_NULL_COPY_FN /
! MPI_WIN_NULL_DELETE_FN by name, and a Fortran error handler made by
! MPI_Win_create_errhandler called through MPI_Win_call_errhandler.
module rma_mpi_util
  use mpi
  implicit none
  integer :: ndelete = 0, nerr = 0, lastcode = -1
  integer(kind=MPI_ADDRESS_KIND) :: lastval = -1
  integer :: lastwin = -1, delwin = -1
contains
  subroutine check(cond, msg)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: msg
    integer :: ierr
    if (cond) return
    write (0, '(A,A)') 'fortran rma_mpi: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    stop 1
  end subroutine check

  subroutine delete_fn(win, win_keyval, attribute_val, extra_state, ierror)
    integer :: win, win_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    ndelete = ndelete + 1
    call check(extra_state == 42, 'delete callback extra_state')
    delwin = win
    lastval = attribute_val
    ierror = MPI_SUCCESS
  end subroutine delete_fn

  subroutine handler(win, code)
    integer :: win, code
    nerr = nerr + 1
    lastwin = win
    lastcode = code
  end subroutine handler

  ! The five predefined attributes of a window.
  subroutine check_attrs(win, size, disp_unit, flavor, base, what)
    integer, intent(in) :: win
    integer(kind=MPI_ADDRESS_KIND), intent(in) :: size, base
    integer, intent(in) :: disp_unit, flavor
    character(len=*), intent(in) :: what
    integer(kind=MPI_ADDRESS_KIND) :: v
    logical :: flag
    integer :: ierr
    call MPI_Win_get_attr(win, MPI_WIN_SIZE, v, flag, ierr)
    call check(flag .and. v == size, what // ': MPI_WIN_SIZE')
    call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, v, flag, ierr)
    call check(flag .and. v == disp_unit, what // ': MPI_WIN_DISP_UNIT')
    call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, v, flag, ierr)
    call check(flag .and. v == flavor, what // ': MPI_WIN_CREATE_FLAVOR')
    call MPI_Win_get_attr(win, MPI_WIN_MODEL, v, flag, ierr)
    call check(flag .and. (v == MPI_WIN_UNIFIED .or. v == MPI_WIN_SEPARATE), &
               what // ': MPI_WIN_MODEL')
    if (size > 0) then
      call MPI_Win_get_attr(win, MPI_WIN_BASE, v, flag, ierr)
      call check(flag .and. v == base, what // ': MPI_WIN_BASE')
    end if
  end subroutine check_attrs
end module rma_mpi_util

program rma_mpi
  use mpi
  use rma_mpi_util
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer, parameter :: N_ACC = 5
  integer :: ierr, r, n, left, right, i, k, dsp, nl, lr, cls
  integer :: key, key2, eh_code
  integer, pointer :: ring(:), peer(:)
  integer(kind=8), pointer :: counter(:)
  integer, target, asynchronous :: arr(0:9), got(3), acc(4), vals(4)
  integer(kind=8), asynchronous :: one, old, total
  integer(kind=8), allocatable :: olds(:), all_olds(:)
  double precision, target, asynchronous :: dacc(3), dvals(3)
  integer(kind=MPI_ADDRESS_KIND) :: addr, sz, extra, val
  integer(kind=MPI_ADDRESS_KIND) :: base
  type(c_ptr) :: sbase, pbase
  integer :: win, cwin, awin, dwin, kwin, swin, node, eh
  logical :: flag
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: lib

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  left = mod(r + n - 1, n)
  right = mod(r + 1, n)

  ! MPI_Win_allocate: 4 integers per rank; each rank puts two into its
  ! right neighbour's elements 2 and 3.
  sz = 4 * 4
  call MPI_Win_allocate(sz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, base, win, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_allocate')
  call c_f_pointer(transfer(base, sbase), ring, (/ 4 /))
  ring = -1
  call MPI_Get_address(ring, addr, ierr)
  call check_attrs(win, sz, 4, MPI_WIN_FLAVOR_ALLOCATE, addr, 'allocate')
  call MPI_Win_fence(0, win, ierr)
  vals(1:2) = (/ 10 * r + 1, 10 * r + 2 /)
  call MPI_Put(vals, 2, MPI_INTEGER, right, 1_MPI_ADDRESS_KIND, 2, MPI_INTEGER, win, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Put')
  call MPI_Win_fence(0, win, ierr)
  call check(all(ring == (/ -1, 10 * left + 1, 10 * left + 2, -1 /)), 'put ring')

  ! MPI_Win_create on an array, MPI_Get from the right neighbour.
  arr = (/ (100 * r + i, i = 0, 9) /)
  call MPI_Win_create(arr, 40_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, cwin, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_create')
  call MPI_Get_address(arr, addr, ierr)
  call check_attrs(cwin, 40_MPI_ADDRESS_KIND, 4, MPI_WIN_FLAVOR_CREATE, addr, 'create')
  got = -1
  call MPI_Win_fence(MPI_MODE_NOPRECEDE, cwin, ierr)
  call MPI_Get(got, 3, MPI_INTEGER, right, 3_MPI_ADDRESS_KIND, 3, MPI_INTEGER, cwin, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Get')
  call MPI_Win_fence(0, cwin, ierr)
  call check(all(got == (/ 100 * right + 3, 100 * right + 4, 100 * right + 5 /)), 'get')
  call check(all(arr == (/ (100 * r + i, i = 0, 9) /)), 'get changed the target')

  ! MPI_Accumulate MPI_SUM from every rank into every rank (integers and
  ! doubles, exactly representable sums).
  acc = 0
  dacc = 0d0
  call MPI_Win_create(acc, 16_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, awin, ierr)
  call MPI_Win_create(dacc, 24_MPI_ADDRESS_KIND, 8, MPI_INFO_NULL, MPI_COMM_WORLD, dwin, ierr)
  call MPI_Win_fence(0, awin, ierr)
  call MPI_Win_fence(0, dwin, ierr)
  vals = (/ ((r + 1) * k, k = 1, 4) /)
  dvals = (/ 0.5d0 * (r + 1), 0.25d0, -1d0 /)
  do i = 0, n - 1
    call MPI_Accumulate(vals, 4, MPI_INTEGER, i, 0_MPI_ADDRESS_KIND, 4, MPI_INTEGER, MPI_SUM, &
                        awin, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Accumulate')
    call MPI_Accumulate(dvals, 3, MPI_DOUBLE_PRECISION, i, 0_MPI_ADDRESS_KIND, 3, &
                        MPI_DOUBLE_PRECISION, MPI_SUM, dwin, ierr)
  end do
  call MPI_Win_fence(0, awin, ierr)
  call MPI_Win_fence(0, dwin, ierr)
  call check(all(acc == (/ (k * n * (n + 1) / 2, k = 1, 4) /)), 'accumulate MPI_SUM')
  call check(all(dacc == (/ 0.25d0 * n * (n + 1), 0.25d0 * n, -1d0 * n /)), &
             'accumulate MPI_SUM of doubles')
  call MPI_Win_free(awin, ierr)
  call MPI_Win_free(dwin, ierr)
  call check(awin == MPI_WIN_NULL .and. dwin == MPI_WIN_NULL, 'MPI_Win_free')

  ! A counter on rank 0 (the others' windows are empty): MPI_Fetch_and_op
  ! under shared locks hands out every number once.
  sz = 0
  if (r == 0) sz = 8
  call MPI_Win_allocate(sz, 8, MPI_INFO_NULL, MPI_COMM_WORLD, base, kwin, ierr)
  if (r == 0) then
    call c_f_pointer(transfer(base, sbase), counter, (/ 1 /))
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, kwin, ierr)
    counter(1) = 0
    call MPI_Win_unlock(0, kwin, ierr)
    call MPI_Get_address(counter, addr, ierr)
  end if
  call check_attrs(kwin, sz, 8, MPI_WIN_FLAVOR_ALLOCATE, addr, 'counter')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  allocate (olds(N_ACC), all_olds(N_ACC * n))
  one = 1
  do i = 1, N_ACC
    call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, kwin, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Win_lock')
    call MPI_Fetch_and_op(one, old, MPI_INTEGER8, 0, 0_MPI_ADDRESS_KIND, MPI_SUM, kwin, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Fetch_and_op')
    call MPI_Win_unlock(0, kwin, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Win_unlock')
    olds(i) = old
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, kwin, ierr)
  call MPI_Fetch_and_op(one, total, MPI_INTEGER8, 0, 0_MPI_ADDRESS_KIND, MPI_NO_OP, kwin, ierr)
  call MPI_Win_unlock(0, kwin, ierr)
  call check(total == N_ACC * n, 'fetch_and_op counter total')
  call MPI_Allgather(olds, N_ACC, MPI_INTEGER8, all_olds, N_ACC, MPI_INTEGER8, MPI_COMM_WORLD, ierr)
  do i = 0, N_ACC * n - 1
    call check(count(all_olds == i) == 1, 'fetch_and_op handed a number out twice')
  end do
  call MPI_Win_free(kwin, ierr)

  ! MPI_Win_allocate_shared on the node; each rank reads its neighbour's
  ! segment through MPI_Win_shared_query.
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node, ierr)
  call MPI_Comm_rank(node, lr, ierr)
  call MPI_Comm_size(node, nl, ierr)
  sz = 4 * (lr + 1)
  call MPI_Win_allocate_shared(sz, 4, MPI_INFO_NULL, node, sbase, swin, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_allocate_shared')
  call c_f_pointer(sbase, ring, (/ lr + 1 /))
  call MPI_Get_address(ring, addr, ierr)
  call check_attrs(swin, sz, 4, MPI_WIN_FLAVOR_SHARED, addr, 'shared')
  call MPI_Win_fence(0, swin, ierr)
  ring = (/ (1000 * lr + i, i = 1, lr + 1) /)
  call MPI_Win_fence(0, swin, ierr)
  k = mod(lr + 1, nl)
  call MPI_Win_shared_query(swin, k, sz, dsp, pbase, ierr)
  call check(ierr == MPI_SUCCESS .and. sz == 4 * (k + 1) .and. dsp == 4, 'MPI_Win_shared_query')
  call c_f_pointer(pbase, peer, (/ k + 1 /))
  call check(all(peer == (/ (1000 * k + i, i = 1, k + 1) /)), 'shared segment of the neighbour')
  call MPI_Win_fence(0, swin, ierr)
  call MPI_Win_free(swin, ierr)
  call MPI_Comm_free(node, ierr)

  ! Keyvals: a Fortran delete callback runs at MPI_Win_delete_attr and at
  ! MPI_Win_free; the predefined callbacks by name.
  extra = 42
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_fn, key, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_create_keyval')
  call MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, key2, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_create_keyval with MPI_WIN_DUP_FN')
  call MPI_Win_get_attr(cwin, key, val, flag, ierr)
  call check(.not. flag, 'attribute set before MPI_Win_set_attr')
  call MPI_Win_set_attr(cwin, key, 1000_MPI_ADDRESS_KIND + r, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_set_attr')
  call MPI_Win_set_attr(cwin, key2, 7_MPI_ADDRESS_KIND, ierr)
  call MPI_Win_get_attr(cwin, key, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. val == 1000 + r, 'MPI_Win_get_attr of a user key')
  call MPI_Win_get_attr(cwin, key2, val, flag, ierr)
  call check(flag .and. val == 7, 'MPI_Win_get_attr of the MPI_WIN_DUP_FN key')
  call MPI_Win_set_attr(cwin, key, 2000_MPI_ADDRESS_KIND + r, ierr)
  call check(ndelete == 1 .and. lastval == 1000 + r, 'delete callback on replacing the value')
  call MPI_Get_library_version(lib, nl, ierr)
  ! (Open MPI 4.1 gives window delete callbacks a wrong handle.)
  if (index(lib(1:nl), 'Loom') > 0) call check(delwin == cwin, 'delete callback window')
  call MPI_Win_delete_attr(cwin, key2, ierr)
  call MPI_Win_get_attr(cwin, key2, val, flag, ierr)
  call check(.not. flag, 'MPI_Win_delete_attr')
  call check(ndelete == 1, 'MPI_WIN_NULL_DELETE_FN called the user callback')

  ! A Fortran error handler on the window.
  call MPI_Win_create_errhandler(handler, eh, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_create_errhandler')
  call MPI_Win_set_errhandler(cwin, eh, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_set_errhandler')
  call MPI_Errhandler_free(eh, ierr)
  call check(eh == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free')
  call MPI_Win_call_errhandler(cwin, MPI_ERR_OTHER, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_call_errhandler')
  call check(nerr == 1 .and. lastcode == MPI_ERR_OTHER .and. lastwin == cwin, &
             'the handler got the window and MPI_ERR_OTHER')
  call MPI_Add_error_class(cls, ierr)
  call MPI_Add_error_code(cls, eh_code, ierr)
  call MPI_Win_call_errhandler(cwin, eh_code, ierr)
  call check(nerr == 2 .and. lastcode == eh_code .and. lastwin == cwin, &
             'the handler got a user error code')
  ! A real error: a put to a rank that does not exist.
  call MPI_Win_fence(0, cwin, ierr)
  call MPI_Put(vals, 1, MPI_INTEGER, n, 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, cwin, ierr)
  call check(ierr /= MPI_SUCCESS .and. nerr == 3 .and. lastcode == ierr, &
             'the handler got the error of a put to rank n')
  call MPI_Error_class(lastcode, cls, ierr)
  call check(cls == MPI_ERR_RANK, 'put to rank n: MPI_ERR_RANK')
  call MPI_Win_fence(0, cwin, ierr)

  swin = cwin
  call MPI_Win_free(cwin, ierr)
  call check(ierr == MPI_SUCCESS .and. cwin == MPI_WIN_NULL, 'MPI_Win_free of the created window')
  call check(ndelete == 2 .and. lastval == 2000 + r, 'delete callback at MPI_Win_free')
  if (index(lib(1:nl), 'Loom') > 0) call check(delwin == swin, 'delete callback window at free')
  call MPI_Win_free_keyval(key, ierr)
  call check(key == MPI_KEYVAL_INVALID, 'MPI_Win_free_keyval')
  call MPI_Win_free_keyval(key2, ierr)

  call MPI_Win_free(win, ierr)
  call MPI_Finalize(ierr)
  write (*, '(A)') 'fortran rma_mpi: checks passed'
end program rma_mpi
