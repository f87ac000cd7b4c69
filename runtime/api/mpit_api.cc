// MPI_T_init_thread / MPI_T_finalize, enumerations, events and event
// sources (see mpit_internal.h for the map of the MPI_T files).
//
// Loom defines no enumeration (every variable is a string or a counter)
// and raises no events, so each enumeration or event handle is invalid,
// each event or source index out of range, and the counts are zero: the
// complete interface of an implementation without events.
#include <algorithm>
#include <cstring>

#include "api/mpit_internal.h"
#include "api/runtime.h"

namespace loom::api::mpit {

int gInitCount = 0;

void copyString(std::string_view s, char* buf, int* len) {
  if (!len) return;
  if (!buf || *len <= 0) {
    *len = static_cast<int>(s.size()) + 1;
    return;
  }
  size_t n = std::min(s.size(), static_cast<size_t>(*len - 1));
  std::memcpy(buf, s.data(), n);
  buf[n] = '\0';
  *len = static_cast<int>(n) + 1;
}

}  // namespace loom::api::mpit

namespace mpit = loom::api::mpit;

// May be called at any time, any number of times; each call needs its
// MPI_T_finalize. Loom's engine serves one thread at a time, so MPI_T gives
// MPI_THREAD_SERIALIZED at most, as MPI_Init_thread does.
extern "C" int PMPI_T_init_thread(int required, int* provided) {
  if (!provided) return MPI_T_ERR_INVALID;
  if (required != MPI_THREAD_SINGLE && required != MPI_THREAD_FUNNELED &&
      required != MPI_THREAD_SERIALIZED && required != MPI_THREAD_MULTIPLE)
    return MPI_T_ERR_INVALID;
  *provided = required < MPI_THREAD_SERIALIZED ? required : MPI_THREAD_SERIALIZED;
  ++mpit::gInitCount;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_init_thread)

// The call balancing the first MPI_T_init_thread frees every handle and
// session still open.
extern "C" int PMPI_T_finalize(void) {
  LOOM_MPIT_REQUIRE_INIT();
  if (--mpit::gInitCount == 0) {
    mpit::freeCvarHandles();
    mpit::freePvarSessions();
  }
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_finalize)

// ---- Enumerations: none is defined (MPI_T_ENUM_NULL everywhere).

extern "C" int PMPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name, int* name_len) {
  (void)enumtype, (void)num, (void)name, (void)name_len;
  LOOM_MPIT_REQUIRE_INIT();
  return MPI_T_ERR_INVALID_HANDLE;
}
LOOM_WEAK_ALIAS(MPI_T_enum_get_info)

extern "C" int PMPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int* value, char* name,
                                    int* name_len) {
  (void)enumtype, (void)indx, (void)value, (void)name, (void)name_len;
  LOOM_MPIT_REQUIRE_INIT();
  return MPI_T_ERR_INVALID_HANDLE;
}
LOOM_WEAK_ALIAS(MPI_T_enum_get_item)

// ---- Events and event sources: Loom has none.

extern "C" int PMPI_T_event_get_num(int* num_events) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!num_events) return MPI_T_ERR_INVALID;
  *num_events = 0;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_event_get_num)

extern "C" int PMPI_T_event_get_info(int event_index, char* name, int* name_len, int* verbosity,
                                     MPI_Datatype array_of_datatypes[],
                                     MPI_Aint array_of_displacements[], int* num_elements,
                                     MPI_T_enum* enumtype, MPI_Info* info, char* desc,
                                     int* desc_len, int* bind) {
  (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
  (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc;
  (void)desc_len, (void)bind;
  LOOM_MPIT_REQUIRE_INIT();
  return MPI_T_ERR_INVALID_INDEX;
}
LOOM_WEAK_ALIAS(MPI_T_event_get_info)

extern "C" int PMPI_T_event_get_index(const char* name, int* event_index) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!name || !event_index) return MPI_T_ERR_INVALID;
  return MPI_T_ERR_INVALID_NAME;
}
LOOM_WEAK_ALIAS(MPI_T_event_get_index)

extern "C" int PMPI_T_event_handle_alloc(int event_index, void* obj_handle, MPI_Info info,
                                         MPI_T_event_registration* event_registration) {
  (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
  LOOM_MPIT_REQUIRE_INIT();
  return MPI_T_ERR_INVALID_INDEX;
}
LOOM_WEAK_ALIAS(MPI_T_event_handle_alloc)

// Every function below takes an event registration or an event instance,
// and there is never a valid one.
#define LOOM_MPIT_NO_HANDLE(...)      \
  {                                   \
    LOOM_MPIT_REQUIRE_INIT();         \
    return MPI_T_ERR_INVALID_HANDLE;  \
  }

extern "C" int PMPI_T_event_handle_free(MPI_T_event_registration, void*,
                                        MPI_T_event_free_cb_function*)
    LOOM_MPIT_NO_HANDLE()
LOOM_WEAK_ALIAS(MPI_T_event_handle_free)

extern "C" int PMPI_T_event_handle_get_info(MPI_T_event_registration, MPI_Info*)
    LOOM_MPIT_NO_HANDLE()
LOOM_WEAK_ALIAS(MPI_T_event_handle_get_info)

extern "C" int PMPI_T_event_handle_set_info(MPI_T_event_registration, MPI_Info)
    LOOM_MPIT_NO_HANDLE()
LOOM_WEAK_ALIAS(MPI_T_event_handle_set_info)

extern "C" int PMPI_T_event_register_callback(MPI_T_event_registration, MPI_T_cb_safety,
                                              MPI_Info, void*, MPI_T_event_cb_function*)
    LOOM_MPIT_NO_HANDLE()
LOOM_WEAK_ALIAS(MPI_T_event_register_callback)

extern "C" int PMPI_T_event_callback_get_info(MPI_T_event_registration, MPI_T_cb_safety,
                                              MPI_Info*)
    LOOM_MPIT_NO_HANDLE()
LOOM_WEAK_ALIAS(MPI_T_event_callback_get_info)

extern "C" int PMPI_T_event_callback_set_info(MPI_T_event_registration, MPI_T_cb_safety,
                                              MPI_Info)
    LOOM_MPIT_NO_HANDLE()
LOOM_WEAK_ALIAS(MPI_T_event_callback_set_info)

extern "C" int PMPI_T_event_set_dropped_handler(MPI_T_event_registration,
                                                MPI_T_event_dropped_cb_function*)
    LOOM_MPIT_NO_HANDLE()
LOOM_WEAK_ALIAS(MPI_T_event_set_dropped_handler)

extern "C" int PMPI_T_event_read(MPI_T_event_instance, int, void*) LOOM_MPIT_NO_HANDLE()
LOOM_WEAK_ALIAS(MPI_T_event_read)

extern "C" int PMPI_T_event_copy(MPI_T_event_instance, void*) LOOM_MPIT_NO_HANDLE()
LOOM_WEAK_ALIAS(MPI_T_event_copy)

extern "C" int PMPI_T_event_get_timestamp(MPI_T_event_instance, MPI_Count*)
    LOOM_MPIT_NO_HANDLE()
LOOM_WEAK_ALIAS(MPI_T_event_get_timestamp)

extern "C" int PMPI_T_event_get_source(MPI_T_event_instance, int*) LOOM_MPIT_NO_HANDLE()
LOOM_WEAK_ALIAS(MPI_T_event_get_source)

#undef LOOM_MPIT_NO_HANDLE

extern "C" int PMPI_T_source_get_num(int* num_sources) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!num_sources) return MPI_T_ERR_INVALID;
  *num_sources = 0;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_source_get_num)

extern "C" int PMPI_T_source_get_info(int source_index, char* name, int* name_len, char* desc,
                                      int* desc_len, MPI_T_source_order* ordering,
                                      MPI_Count* ticks_per_second, MPI_Count* max_ticks,
                                      MPI_Info* info) {
  (void)source_index, (void)name, (void)name_len, (void)desc, (void)desc_len, (void)ordering;
  (void)ticks_per_second, (void)max_ticks, (void)info;
  LOOM_MPIT_REQUIRE_INIT();
  return MPI_T_ERR_INVALID_INDEX;
}
LOOM_WEAK_ALIAS(MPI_T_source_get_info)

extern "C" int PMPI_T_source_get_timestamp(int source_index, MPI_Count* timestamp) {
  (void)source_index, (void)timestamp;
  LOOM_MPIT_REQUIRE_INIT();
  return MPI_T_ERR_INVALID_INDEX;
}
LOOM_WEAK_ALIAS(MPI_T_source_get_timestamp)
