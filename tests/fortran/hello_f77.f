C     hello_f77: fixed form, include 'mpif.h'. Every rank says
C     who it is; the ranks' sum is checked with MPI_ALLREDUCE. When
C     EXPECT_SIZE is set, the size must match it.
      PROGRAM HELLOF77
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROCS, ISUM, NLEN, IEXP, ISTAT
      CHARACTER*(MPI_MAX_PROCESSOR_NAME) PNAME
      CHARACTER*16 ENVV
      LOGICAL FLAG
      CALL MPI_INITIALIZED(FLAG, IERR)
      IF (FLAG) STOP 'hello_f77: initialized before MPI_INIT'
      CALL MPI_INIT(IERR)
      IF (IERR .NE. MPI_SUCCESS) STOP 'hello_f77: MPI_INIT failed'
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      CALL MPI_GET_PROCESSOR_NAME(PNAME, NLEN, IERR)
      WRITE (*, '(A,I0,A,I0,A,A)') 'Hello from rank ', RANK, ' of ',
     &     NPROCS, ' on ', PNAME(1:NLEN)
      IF (RANK .LT. 0 .OR. RANK .GE. NPROCS) THEN
         CALL FAIL('rank out of range')
      END IF
      CALL MPI_ALLREDUCE(RANK, ISUM, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      IF (IERR .NE. MPI_SUCCESS) CALL FAIL('MPI_ALLREDUCE failed')
      IF (ISUM .NE. NPROCS*(NPROCS-1)/2) CALL FAIL('wrong rank sum')
      CALL GET_ENVIRONMENT_VARIABLE('EXPECT_SIZE', ENVV, STATUS=ISTAT)
      IF (ISTAT .EQ. 0) THEN
         READ (ENVV, *) IEXP
         IF (IEXP .NE. NPROCS) CALL FAIL('size /= EXPECT_SIZE')
      END IF
      CALL MPI_FINALIZE(IERR)
      CALL MPI_FINALIZED(FLAG, IERR)
      IF (.NOT. FLAG) STOP 'hello_f77: MPI_FINALIZED is false'
      WRITE (*, '(A)') 'fortran hello_f77: checks passed'
      END

      SUBROUTINE FAIL(MSG)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      CHARACTER*(*) MSG
      INTEGER IERR
      WRITE (0, '(A,A)') 'fortran hello_f77: FAILED: ', MSG
      CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      STOP 1
      END
