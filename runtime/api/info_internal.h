// What the API layer shares about info objects (info_api.cc): handle
// translation, argument checks with the standard's error classes, and the
// error path of calls that involve no communicator.
#pragma once

#include <mpi.h>

#include "core/info.h"
#include "core/status.h"

namespace loom::api {

// nullptr for MPI_INFO_NULL, invalid or freed handles. MPI_INFO_ENV maps to
// the environment's info (rebuilt from what Loom knows at each lookup).
Info* toInfo(MPI_Info handle);
MPI_Info toHandle(Info* info);

// Checks a key (non-NULL, 1 .. MPI_MAX_INFO_KEY-1 characters:
// MPI_ERR_INFO_KEY) or a value (non-NULL, at most MPI_MAX_INFO_VAL-1
// characters: MPI_ERR_INFO_VALUE).
Status checkInfoKey(const char* key);
Status checkInfoValue(const char* value);

// A new info object the caller hands to the user.
MPI_Info newInfo(InfoEntries entries);

// Reports an error of a call that involves no communicator (info objects,
// the ABI queries, sessions before their session is known): through
// MPI_COMM_WORLD's handler while the world model is initialized; otherwise
// the code is returned (Loom's initial error handler is MPI_ERRORS_RETURN:
// these calls may be made before MPI_Init or without it).
int raiseNoObject(const Status& status, const char* function);

// The standard's names of the thread levels ("MPI_THREAD_SINGLE", ...), and
// back (-1 for an unknown name).
const char* threadLevelName(int level);
int threadLevelFromName(const char* name);

}  // namespace loom::api
