! more_f08: the more_mpi checks through `use mpi_f08`: 1-based indices
! (MPI_Waitany/Testany/Waitsome, MPI_UNDEFINED), MPI_BOTTOM, keyvals with
! Fortran callbacks taking TYPE(MPI_Comm) and MPI_COMM_NULL_COPY_FN, LOGICAL
! flags, MPI_Group_translate_ranks, MPI_Info_get_nthkey, type names.
module more_f08_util
  use mpi_f08
  implicit none
  integer :: ncopy = 0, ndelete = 0
contains
  subroutine check(cond, msg)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: msg
    if (cond) return
    write (0, '(A,A)') 'fortran more_f08: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1)
    stop 1
  end subroutine check

  subroutine copy_fn(oldcomm, comm_keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    ncopy = ncopy + 1
    call check(extra_state == 77, 'copy callback extra_state')
    call check(oldcomm /= MPI_COMM_NULL, 'copy callback communicator')
    attribute_val_out = attribute_val_in + 1
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine copy_fn

  subroutine delete_fn(comm, comm_keyval, attribute_val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    ndelete = ndelete + 1
    call check(extra_state == 77, 'delete callback extra_state')
    ierror = MPI_SUCCESS
  end subroutine delete_fn
end module more_f08_util

program more_f08
  use mpi_f08
  use more_f08_util
  implicit none
  integer :: r, n, idx, outcount, i, key, key2, nkeys, nlen
  integer :: indices(3), ranks(2), tranks(2)
  type(MPI_Request) :: reqs(3)
  type(MPI_Status) :: st, sts(3)
  type(MPI_Comm) :: dup, dup2
  type(MPI_Group) :: wgrp, sgrp
  type(MPI_Info) :: info
  type(MPI_Datatype) :: btype, types(2)
  integer :: a(3), b(3), c, blens(2)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2), val, extra
  logical :: flag
  character(len=MPI_MAX_INFO_KEY) :: keyname
  character(len=MPI_MAX_OBJECT_NAME) :: tname
  double precision :: d

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, n)

  reqs = MPI_REQUEST_NULL
  call MPI_Waitany(3, reqs, idx, st)
  call check(idx == MPI_UNDEFINED, 'waitany without active requests')
  call MPI_Irecv(b, 3, MPI_INTEGER, 0, 5, MPI_COMM_SELF, reqs(2))
  call MPI_Testany(3, reqs, idx, flag, st)
  call check(.not. flag, 'testany before the send')
  a = (/ 1, 2, 3 /) + r
  call MPI_Send(a, 3, MPI_INTEGER, 0, 5, MPI_COMM_SELF)
  call MPI_Waitany(3, reqs, idx, st)
  call check(idx == 2, 'waitany index is 1-based')
  call check(reqs(2) == MPI_REQUEST_NULL .and. st%MPI_TAG == 5 .and. all(b == a), 'waitany result')
  call MPI_Irecv(b, 1, MPI_INTEGER, 0, 6, MPI_COMM_SELF, reqs(3))
  call MPI_Irecv(c, 1, MPI_INTEGER, 0, 7, MPI_COMM_SELF, reqs(1))
  call MPI_Send(a, 1, MPI_INTEGER, 0, 7, MPI_COMM_SELF)
  call MPI_Send(a, 1, MPI_INTEGER, 0, 6, MPI_COMM_SELF)
  outcount = 0
  do while (outcount < 2)
    call MPI_Waitsome(3, reqs, i, indices, sts)
    call check(i >= 1 .and. all(indices(1:i) == 1 .or. indices(1:i) == 3), 'waitsome indices 1-based')
    outcount = outcount + i
  end do
  call MPI_Waitsome(3, reqs, i, indices, MPI_STATUSES_IGNORE)
  call check(i == MPI_UNDEFINED, 'waitsome without active requests')
  call MPI_Isend(a, 1, MPI_INTEGER, 0, 8, MPI_COMM_SELF, reqs(1))
  call MPI_Recv(c, 1, MPI_INTEGER, 0, 8, MPI_COMM_SELF, MPI_STATUS_IGNORE)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(reqs(1), flag, st)
  end do
  call MPI_Testall(3, reqs, flag, sts)
  call check(flag, 'testall of null requests is true')

  call MPI_Get_address(a(2), disps(1))
  call MPI_Get_address(d, disps(2))
  blens = 1
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
  call MPI_Type_create_struct(2, blens, disps, types, btype)
  call MPI_Type_commit(btype)
  if (r == 0) then
    a(2) = 99
    d = 1.25d0
  else
    a(2) = -1
    d = 0
  end if
  ! Buffers reached only through MPI_BOTTOM: the compiler must not keep them
  ! in registers across the call (MPI_F_sync_reg, as the standard says).
  call MPI_F_sync_reg(a)
  call MPI_F_sync_reg(d)
  call MPI_Bcast(MPI_BOTTOM, 1, btype, 0, MPI_COMM_WORLD)
  call MPI_F_sync_reg(a)
  call MPI_F_sync_reg(d)
  call check(a(2) == 99 .and. d == 1.25d0, 'bcast from MPI_BOTTOM')
  call MPI_Type_set_name(btype, 'bottom struct')
  call MPI_Type_get_name(btype, tname, nlen)
  call check(tname(1:nlen) == 'bottom struct', 'type name')
  call MPI_Type_free(btype)

  extra = 77
  call MPI_Comm_create_keyval(copy_fn, delete_fn, key, extra)
  val = 1000 + r
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key, val)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call check(ncopy == 1, 'copy callback not called once')
  call MPI_Comm_get_attr(dup, key, val, flag)
  call check(flag .and. val == 1001 + r, 'copied attribute value')
  extra = 0
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key2, extra)
  call MPI_Comm_set_attr(dup, key2, 5_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup, dup2)
  call MPI_Comm_get_attr(dup2, key2, val, flag)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN copied the attribute')
  call MPI_Comm_free(dup2)
  call check(ndelete == 1, 'delete callback on free')
  call MPI_Comm_free(dup)
  call check(ndelete == 2, 'delete callback on the second free')
  call MPI_Comm_free_keyval(key)
  call check(key == MPI_KEYVAL_INVALID, 'free_keyval')
  call MPI_Comm_free_keyval(key2)

  call MPI_Comm_group(MPI_COMM_WORLD, wgrp)
  call MPI_Comm_group(MPI_COMM_SELF, sgrp)
  ranks = (/ n - 1, 0 /)
  call MPI_Group_translate_ranks(wgrp, 2, ranks, sgrp, tranks)
  call check(tranks(1) == merge(0, MPI_UNDEFINED, r == n - 1) .and. &
             tranks(2) == merge(0, MPI_UNDEFINED, r == 0), 'translate_ranks world -> self')
  call MPI_Group_free(wgrp)
  call MPI_Group_free(sgrp)

  call MPI_Info_create(info)
  call MPI_Info_set(info, 'alpha', '1')
  call MPI_Info_set(info, 'beta', 'two')
  call MPI_Info_get_nkeys(info, nkeys)
  call check(nkeys == 2, 'info nkeys')
  call MPI_Info_get_nthkey(info, 1, keyname)
  call check(keyname == 'beta', 'nthkey 1 (0-based n) is the second key')
  call MPI_Info_free(info)
  call check(info == MPI_INFO_NULL, 'info_free')

  call MPI_Finalize()
  write (*, '(A)') 'fortran more_f08: checks passed'
end program more_f08
