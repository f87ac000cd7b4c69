! f2c_iface: interfaces of the C functions in f2c_c.c (handles as MPI_Fint,
! a C int, passed by value; statuses and outputs by reference).
module f2c_iface
  use, intrinsic :: iso_c_binding, only: c_int, c_char
  implicit none
  integer, parameter :: F2C_SKIP = 77
  interface
    subroutine ft_predefined(out) bind(C, name='ft_predefined')
      import :: c_int
      integer(c_int) :: out(12)
    end subroutine ft_predefined
    integer(c_int) function ft_comm(f, size) bind(C, name='ft_comm')
      import :: c_int
      integer(c_int), value :: f
      integer(c_int) :: size
    end function ft_comm
    integer(c_int) function ft_comm_dup(f) bind(C, name='ft_comm_dup')
      import :: c_int
      integer(c_int), value :: f
    end function ft_comm_dup
    integer(c_int) function ft_type(f, size) bind(C, name='ft_type')
      import :: c_int
      integer(c_int), value :: f
      integer(c_int) :: size
    end function ft_type
    integer(c_int) function ft_type_contig(n, f) bind(C, name='ft_type_contig')
      import :: c_int
      integer(c_int), value :: n, f
    end function ft_type_contig
    integer(c_int) function ft_group(f, size) bind(C, name='ft_group')
      import :: c_int
      integer(c_int), value :: f
      integer(c_int) :: size
    end function ft_group
    integer(c_int) function ft_request_wait(f, source, count) bind(C, name='ft_request_wait')
      import :: c_int
      integer(c_int) :: f, source, count
    end function ft_request_wait
    integer(c_int) function ft_op(f, in, inout, n) bind(C, name='ft_op')
      import :: c_int
      integer(c_int), value :: f, n
      integer(c_int) :: in(*), inout(*)
    end function ft_op
    integer(c_int) function ft_info(f, value, len) bind(C, name='ft_info')
      import :: c_int, c_char
      integer(c_int), value :: f
      character(kind=c_char) :: value(*)
      integer(c_int) :: len
    end function ft_info
    integer(c_int) function ft_errhandler(f) bind(C, name='ft_errhandler')
      import :: c_int
      integer(c_int), value :: f
    end function ft_errhandler
    integer(c_int) function ft_status(fst, fout, source, tag, count) bind(C, name='ft_status')
      import :: c_int
      integer(c_int) :: fst(*), fout(*), source, tag, count
    end function ft_status
  end interface
end module f2c_iface
