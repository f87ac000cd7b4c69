! more_mpi: places where Fortran bindings usually go wrong, through `use mpi`:
! 1-based indices (MPI_Waitany/Testany/Waitsome, MPI_UNDEFINED when none is
! active), MPI_BOTTOM with absolute addresses, attribute keyvals with Fortran
! copy/delete callbacks and MPI_COMM_DUP_FN / MPI_COMM_NULL_COPY_FN,
! LOGICAL flags (MPI_Test, MPI_Testall), MPI_Group_translate_ranks,
! MPI_Info_get_nthkey, MPI_Type_set_name/get_name.
module more_mpi_util
  use mpi
  implicit none
  integer :: ncopy = 0, ndelete = 0
contains
  subroutine check(cond, msg)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: msg
    integer :: ierr
    if (cond) return
    write (0, '(A,A)') 'fortran more_mpi: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    stop 1
  end subroutine check

  subroutine copy_fn(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierr)
    integer :: oldcomm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    ncopy = ncopy + 1
    call check(extra_state == 77, 'copy callback extra_state')
    attribute_val_out = attribute_val_in + 1
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine copy_fn

  subroutine delete_fn(comm, keyval, attribute_val, extra_state, ierr)
    integer :: comm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    ndelete = ndelete + 1
    call check(extra_state == 77, 'delete callback extra_state')
    ierr = MPI_SUCCESS
  end subroutine delete_fn
end module more_mpi_util

program more_mpi
  use mpi
  use more_mpi_util
  implicit none
  integer :: ierr, r, n, idx, outcount, i, key, key2, dup, dup2, wgrp, sgrp, nkeys, info, nlen
  integer :: reqs(3), indices(3), ranks(2), tranks(2), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 3)
  integer :: b(3), c, btype, blens(2), types(2)
  integer, volatile :: a(3)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2), val, extra
  logical :: flag
  character(len=MPI_MAX_INFO_KEY) :: keyname
  character(len=MPI_MAX_OBJECT_NAME) :: tname
  double precision, volatile :: d

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)

  ! Waitany / Testany / Waitsome: indices are 1-based; MPI_UNDEFINED when no
  ! request is active. Request 2 is the only real one.
  reqs = MPI_REQUEST_NULL
  call MPI_Waitany(3, reqs, idx, st, ierr)
  call check(ierr == MPI_SUCCESS .and. idx == MPI_UNDEFINED, 'waitany without active requests')
  call MPI_Irecv(b, 3, MPI_INTEGER, 0, 5, MPI_COMM_SELF, reqs(2), ierr)
  call MPI_Testany(3, reqs, idx, flag, st, ierr)
  call check(.not. flag, 'testany before the send')
  a = (/ 1, 2, 3 /) + r
  call MPI_Send(a, 3, MPI_INTEGER, 0, 5, MPI_COMM_SELF, ierr)
  call MPI_Waitany(3, reqs, idx, st, ierr)
  call check(idx == 2, 'waitany index is 1-based')
  call check(reqs(2) == MPI_REQUEST_NULL .and. st(MPI_TAG) == 5 .and. all(b == a), 'waitany result')
  call MPI_Irecv(b, 1, MPI_INTEGER, 0, 6, MPI_COMM_SELF, reqs(3), ierr)
  call MPI_Irecv(c, 1, MPI_INTEGER, 0, 7, MPI_COMM_SELF, reqs(1), ierr)
  call MPI_Send(a, 1, MPI_INTEGER, 0, 7, MPI_COMM_SELF, ierr)
  call MPI_Send(a, 1, MPI_INTEGER, 0, 6, MPI_COMM_SELF, ierr)
  outcount = 0
  do while (outcount < 2)
    call MPI_Waitsome(3, reqs, i, indices, sts, ierr)
    call check(i >= 1 .and. all(indices(1:i) == 1 .or. indices(1:i) == 3), 'waitsome indices 1-based')
    outcount = outcount + i
  end do
  call MPI_Waitsome(3, reqs, i, indices, MPI_STATUSES_IGNORE, ierr)
  call check(i == MPI_UNDEFINED, 'waitsome without active requests')
  call MPI_Isend(a, 1, MPI_INTEGER, 0, 8, MPI_COMM_SELF, reqs(1), ierr)
  call MPI_Recv(c, 1, MPI_INTEGER, 0, 8, MPI_COMM_SELF, MPI_STATUS_IGNORE, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(reqs(1), flag, st, ierr)
  end do
  call MPI_Testall(3, reqs, flag, sts, ierr)
  call check(flag, 'testall of null requests is true')

  ! MPI_BOTTOM: a struct of absolute addresses of a(2) and d.
  call MPI_Get_address(a(2), disps(1), ierr)
  call MPI_Get_address(d, disps(2), ierr)
  blens = 1
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
  call MPI_Type_create_struct(2, blens, disps, types, btype, ierr)
  call MPI_Type_commit(btype, ierr)
  if (r == 0) then
    a(2) = 99
    d = 1.25d0
  else
    a(2) = -1
    d = 0
  end if
  ! a and d are reached only through MPI_BOTTOM: they are VOLATILE so that the
  ! compiler does not keep them in registers across the call (interfaces_mpi
  ! uses MPI_F_sync_reg instead).
  call MPI_Bcast(MPI_BOTTOM, 1, btype, 0, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. a(2) == 99 .and. d == 1.25d0, 'bcast from MPI_BOTTOM')
  call MPI_Type_set_name(btype, 'bottom struct', ierr)
  call MPI_Type_get_name(btype, tname, nlen, ierr)
  call check(tname(1:nlen) == 'bottom struct', 'type name')
  call MPI_Type_get_name(MPI_INTEGER, tname, nlen, ierr)
  call check(tname(1:nlen) == 'MPI_INTEGER', 'name of MPI_INTEGER')
  call MPI_Type_free(btype, ierr)

  ! Keyvals with Fortran callbacks: dup copies (value + 1), free deletes.
  extra = 77
  call MPI_Comm_create_keyval(copy_fn, delete_fn, key, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'create_keyval')
  val = 1000 + r
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key, val, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call check(ncopy == 1, 'copy callback not called once')
  call MPI_Comm_get_attr(dup, key, val, flag, ierr)
  call check(flag .and. val == 1001 + r, 'copied attribute value')
  extra = 0
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key2, extra, ierr)
  call MPI_Comm_set_attr(dup, key2, 5_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_dup(dup, dup2, ierr)
  call MPI_Comm_get_attr(dup2, key2, val, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN copied the attribute')
  call MPI_Comm_get_attr(dup2, key, val, flag, ierr)
  call check(flag .and. val == 1002 + r .and. ncopy == 2, 'second copy')
  call MPI_Comm_free(dup2, ierr)
  call check(ndelete == 1, 'delete callback on free')
  call MPI_Comm_delete_attr(dup, key, ierr)
  call check(ndelete == 2, 'delete callback on delete_attr')
  call MPI_Comm_free(dup, ierr)
  call check(ndelete == 2, 'delete callback after delete_attr')
  call MPI_Comm_free_keyval(key, ierr)
  call check(key == MPI_KEYVAL_INVALID, 'free_keyval')
  call MPI_Comm_free_keyval(key2, ierr)

  ! Group rank translation.
  call MPI_Comm_group(MPI_COMM_WORLD, wgrp, ierr)
  call MPI_Comm_group(MPI_COMM_SELF, sgrp, ierr)
  ranks = (/ 0, 0 /)
  call MPI_Group_translate_ranks(sgrp, 1, ranks, wgrp, tranks, ierr)
  call check(tranks(1) == r, 'translate_ranks self -> world')
  ranks = (/ n - 1, 0 /)
  call MPI_Group_translate_ranks(wgrp, 2, ranks, sgrp, tranks, ierr)
  call check(tranks(1) == merge(0, MPI_UNDEFINED, r == n - 1) .and. &
             tranks(2) == merge(0, MPI_UNDEFINED, r == 0), 'translate_ranks world -> self')
  call MPI_Group_free(wgrp, ierr)
  call MPI_Group_free(sgrp, ierr)

  ! Info keys by number.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'alpha', '1', ierr)
  call MPI_Info_set(info, 'beta', 'two', ierr)
  call MPI_Info_get_nkeys(info, nkeys, ierr)
  call check(nkeys == 2, 'info nkeys')
  call MPI_Info_get_nthkey(info, 1, keyname, ierr)
  call check(keyname == 'beta', 'nthkey 1 (0-based n) is the second key')
  call MPI_Info_free(info, ierr)
  call check(info == MPI_INFO_NULL, 'info_free')

  call MPI_Finalize(ierr)
  write (*, '(A)') 'fortran more_mpi: checks passed'
end program more_mpi
