C     mismatch_f77: the mpif.h style that gfortran 10 and newer reject
C     unless -fallow-argument-mismatch is given (the wrappers add it):
C     one routine (MPI_BCAST) called with INTEGER, DOUBLE PRECISION and
C     CHARACTER buffers in one file.
      PROGRAM MISMATCH
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, IBUF(3)
      DOUBLE PRECISION DBUF(2)
      CHARACTER*8 CBUF
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      IBUF(1) = -1
      DBUF(1) = -1D0
      CBUF = '????????'
      IF (RANK .EQ. 0) THEN
         IBUF(1) = 7
         DBUF(1) = 2.5D0
         CBUF = 'loom f77'
      END IF
      CALL MPI_BCAST(IBUF, 3, MPI_INTEGER, 0, MPI_COMM_WORLD, IERR)
      CALL MPI_BCAST(DBUF, 2, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD,
     &     IERR)
      CALL MPI_BCAST(CBUF, 8, MPI_CHARACTER, 0, MPI_COMM_WORLD, IERR)
      IF (IBUF(1) .NE. 7 .OR. DBUF(1) .NE. 2.5D0
     &     .OR. CBUF .NE. 'loom f77') THEN
         WRITE (0, '(A)') 'fortran mismatch_f77: FAILED: bcast'
         CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END IF
      CALL MPI_FINALIZE(IERR)
      WRITE (*, '(A)') 'fortran mismatch_f77: checks passed'
      END
