! f2c_f08: handles of `use mpi_f08` go to C (f2c_c.c) through their %MPI_VAL,
! are converted with MPI_*_f2c, used and converted back; a handle made in C
! becomes TYPE(MPI_Comm) again; mpi and mpi_f08 handles mix; TYPE(MPI_Status)
! goes to C as MPI_F08_status (MPI_Status_f082c/c2f08/f082f/f2f08) and,
! where the library has them, MPI_Status_f082f/f2f08 in Fortran
! (HAVE_F08_STATUS_CONV, defined for Loom; Open MPI 4.1 lacks them).
module f2c_f08_util
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function ft_status_f08(f08, f08out, fout, source, count) &
        bind(C, name='ft_status_f08')
      import :: c_int, MPI_Status
      type(MPI_Status) :: f08, f08out
      integer(c_int) :: fout(*), source, count
    end function ft_status_f08
  end interface
contains
  subroutine check(cond, msg)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: msg
    if (cond) return
    write (0, '(A,A)') 'fortran f2c_f08: FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1)
    stop 1
  end subroutine check

  subroutine check_rc(rc, msg)
    integer, intent(in) :: rc
    character(len=*), intent(in) :: msg
    if (rc /= 0) write (0, '(A,A,I0)') msg, ': C check failed: ', rc
    call check(rc == 0, msg)
  end subroutine check_rc
end module f2c_f08_util

! An old-style routine (use mpi) called with an mpi_f08 handle's value.
subroutine old_size(comm, size)
  use mpi
  implicit none
  integer :: comm, size, ierr
  call MPI_Comm_size(comm, size, ierr)
  if (ierr /= MPI_SUCCESS) size = -1
end subroutine old_size

program f2c_f08
  use mpi_f08
  use f2c_iface
  use f2c_f08_util
  implicit none
  integer :: r, n, sz, rc, src, cnt, pre(12), buf(6), in(4)
  integer :: fst(MPI_STATUS_SIZE)
  type(MPI_Comm) :: c2
  type(MPI_Datatype) :: t3
  type(MPI_Group) :: grp
  type(MPI_Request) :: req
  type(MPI_Status) :: st, st2

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, n)

  call ft_predefined(pre)
  call check(pre(1) == MPI_COMM_WORLD%MPI_VAL .and. pre(2) == MPI_COMM_SELF%MPI_VAL, &
             'predefined communicators')
  call check(MPI_Comm(pre(1)) == MPI_COMM_WORLD, 'TYPE(MPI_Comm) from the C value')
  call check(pre(4) == MPI_INTEGER%MPI_VAL .and. pre(7) == MPI_SUM%MPI_VAL .and. &
             pre(9) == MPI_REQUEST_NULL%MPI_VAL .and. pre(8) == MPI_GROUP_EMPTY%MPI_VAL, &
             'predefined handles')
  call old_size(MPI_COMM_WORLD%MPI_VAL, sz)
  call check(sz == n, 'mpi routine with an mpi_f08 handle value')

  call check_rc(ft_comm(MPI_COMM_WORLD%MPI_VAL, sz), 'comm world')
  call check(sz == n, 'size of MPI_COMM_WORLD in C')
  c2%MPI_VAL = ft_comm_dup(MPI_COMM_WORLD%MPI_VAL)
  call check(c2 /= MPI_COMM_NULL .and. c2 /= MPI_COMM_WORLD, 'dup made in C')
  call MPI_Comm_size(c2, sz)
  call check(sz == n, 'Fortran uses a communicator made in C')

  call check_rc(ft_type(MPI_DOUBLE_PRECISION%MPI_VAL, sz), 'type')
  call check(sz == 8, 'MPI_DOUBLE_PRECISION size in C')
  t3 = MPI_Datatype(ft_type_contig(3, MPI_INTEGER%MPI_VAL))
  call MPI_Type_size(t3, sz)
  call check(sz == 12, 'contiguous type made in C')
  buf = -1
  if (r == 0) buf = (/ 1, 2, 3, 4, 5, 6 /)
  call MPI_Bcast(buf, 2, t3, 0, c2)
  call check(all(buf == (/ 1, 2, 3, 4, 5, 6 /)), 'bcast with the C type')
  call MPI_Type_free(t3)

  call MPI_Comm_group(c2, grp)
  call check_rc(ft_group(grp%MPI_VAL, sz), 'group')
  call check(sz == n, 'group size in C')
  call MPI_Group_free(grp)

  buf = -1
  call MPI_Irecv(buf, 6, MPI_INTEGER, mod(r + n - 1, n), 7, c2, req)
  in = r
  call MPI_Send(in, 4, MPI_INTEGER, mod(r + 1, n), 7, c2)
  call check_rc(ft_request_wait(req%MPI_VAL, src, cnt), 'request')
  call check(req == MPI_REQUEST_NULL, 'C gave back MPI_REQUEST_NULL')
  call check(src == mod(r + n - 1, n) .and. cnt == 4 .and. all(buf(1:4) == src), &
             'request completed in C')
  call check_rc(ft_errhandler(MPI_ERRORS_RETURN%MPI_VAL), 'errhandler')

  ! TYPE(MPI_Status) through C: f082c, c2f08, f082f, f2f08.
  buf = r
  call MPI_Sendrecv(buf, 3, MPI_INTEGER, mod(r + 1, n), 9, in, 4, MPI_INTEGER, &
                    mod(r + n - 1, n), MPI_ANY_TAG, c2, st)
  call check(st%MPI_SOURCE == mod(r + n - 1, n) .and. st%MPI_TAG == 9, 'sendrecv status')
  fst = -99
  rc = ft_status_f08(st, st2, fst, src, cnt)
  if (rc /= F2C_SKIP) then
    call check_rc(rc, 'TYPE(MPI_Status) in C')
    call check(src == st%MPI_SOURCE .and. cnt == 3, 'f08 status fields in C')
    call check(st2%MPI_SOURCE == st%MPI_SOURCE .and. st2%MPI_TAG == 9, 'status from MPI_Status_f2f08')
    call MPI_Get_count(st2, MPI_INTEGER, cnt)
    call check(cnt == 3, 'count of the status from MPI_Status_f2f08')
    call check(fst(MPI_SOURCE) == st%MPI_SOURCE .and. fst(MPI_TAG) == 9, &
               'INTEGER status from MPI_Status_f082f')
  end if
#ifdef HAVE_F08_STATUS_CONV
  fst = -99
  call MPI_Status_f082f(st, fst)
  call check(fst(MPI_SOURCE) == st%MPI_SOURCE .and. fst(MPI_TAG) == 9, 'MPI_Status_f082f in Fortran')
  st2%MPI_SOURCE = -5
  call MPI_Status_f2f08(fst, st2)
  call check(st2%MPI_SOURCE == st%MPI_SOURCE .and. st2%MPI_TAG == 9, 'MPI_Status_f2f08 in Fortran')
  call MPI_Get_count(st2, MPI_INTEGER, cnt)
  call check(cnt == 3, 'count after Fortran f082f/f2f08')
#endif

  call MPI_Comm_free(c2)
  call MPI_Finalize()
  write (*, '(A)') 'fortran f2c_f08: checks passed'
end program f2c_f08
