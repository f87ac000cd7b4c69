#include <gtest/gtest.h>
#include <mpi.h>

#include <set>

#include "core/status.h"

TEST(Status, DefaultIsSuccess) {
  loom::Status st;
  EXPECT_TRUE(st.isOk());
  EXPECT_EQ(st.code(), MPI_SUCCESS);
}

TEST(Status, ErrorfFormats) {
  loom::Status st = loom::errorf(MPI_ERR_RANK, "rank %d out of range [0, %d)", 7, 4);
  EXPECT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), MPI_ERR_RANK);
  EXPECT_EQ(st.message(), "rank 7 out of range [0, 4)");
}

TEST(Status, EveryClassHasTextAndName) {
  // Error classes are the integers MPI_SUCCESS..MPI_ERR_LASTCODE; every one
  // the standard defines below the last code must have a name and a text.
  std::set<std::string> names;
  for (int c : {MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG,
                MPI_ERR_COMM, MPI_ERR_RANK, MPI_ERR_ROOT, MPI_ERR_GROUP, MPI_ERR_OP,
                MPI_ERR_ARG, MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN,
                MPI_ERR_ERRHANDLER, MPI_ERR_SESSION, MPI_ERR_VALUE_TOO_LARGE}) {
    ASSERT_NE(loom::errorClassText(c), nullptr) << c;
    ASSERT_NE(loom::errorClassName(c), nullptr) << c;
    names.insert(loom::errorClassName(c));
  }
  EXPECT_EQ(names.size(), 17u);  // all distinct
  EXPECT_EQ(loom::errorClassText(-5), nullptr);
  EXPECT_EQ(loom::errorClassText(MPI_ERR_LASTCODE + 1), nullptr);
}
