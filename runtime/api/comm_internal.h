// What communicator management needs inside the API layer: handle
// translation for communicators and groups, two tiny collectives built on
// point-to-point, context-id agreement, and the attribute hooks that
// MPI_Comm_dup and MPI_Comm_free call.
//
// The collectives here exist so that communicators can be created before
// the collective module does; they carry a few bytes per process and favour
// being obviously correct for every rank count over being fast.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/comm.h"
#include "core/group.h"
#include "core/status.h"

namespace loom::api {

// Handle translation. Predefined handles map to the runtime's objects;
// nullptr for null, invalid or freed handles.
MPI_Comm toHandle(Comm* c);
Group* toGroup(MPI_Group handle);
MPI_Group toHandle(Group* g);  // MPI_GROUP_EMPTY for the empty group

// Tags of the internal collectives on Channel::kColl. The collective module
// must stay clear of them (or replace these helpers).
inline constexpr int kTagAllgather = 0x7c0001;
inline constexpr int kTagReduce = 0x7c0002;
inline constexpr int kTagBcast = 0x7c0003;

// A context id no communicator ever gets: MPI_Init reserves it on every
// process before any agreement. MPI_Comm_create_group and
// MPI_Comm_create_from_group agree on their context id over it, among the
// group's members only (comm_group_api.cc), on a communicator spanning the
// job so that sources are job ranks.
inline constexpr uint32_t kCtxGroupCreate = ContextIdMask::kIds - 1;

// Every process contributes `bytes` bytes at `mine`; `all` receives
// comm->size() records, rank order. Bruck's algorithm: ceil(log2 p) rounds.
Status allgatherSmall(Comm* comm, const void* mine, size_t bytes, void* all);

// `words` becomes the bitwise AND of every process's `words`: a binomial
// reduce to rank 0, then a binomial broadcast (2 ceil(log2 p) rounds).
Status allreduceBand(Comm* comm, uint64_t* words, int nwords);

// A context id free on every process of `parent` (collective over parent).
// Does not take it: members of the new communicator call
// contextIds().take(*id) and setOwnsContextId(true).
Status agreeContextId(Comm* parent, uint32_t* id);

// Whether Loom recognises `key` as a communicator hint (comm_info_api.cc):
// communicators keep only those.
bool isCommHint(const std::string& key);

// MPI_Comm_dup and its variants (comm_mgmt_api.cc): the new communicator
// gets `hints`, or the parent's when `hints` is null. idupComm returns at
// once; its request completes when the background agreement has ended.
int dupComm(MPI_Comm comm, const InfoEntries* hints, MPI_Comm* newcomm, const char* fn);
int idupComm(MPI_Comm comm, const InfoEntries* hints, MPI_Comm* newcomm, MPI_Request* request,
             const char* fn);

// Attributes (attr_api.cc). Both return an MPI error code: MPI_SUCCESS, or
// what a user callback returned.
// Runs the copy callbacks of `from`'s attributes for MPI_Comm_dup.
int copyAttributes(Comm* from, MPI_Comm fromHandle, Comm* to);
// The same into a list of its own (MPI_Comm_idup copies at the call, before
// the communicator exists), and the delete callbacks of such a list, with
// `handle` as the communicator.
int copyAttributesInto(Comm* from, MPI_Comm fromHandle, std::vector<Attribute>* to);
int deleteAttributeList(std::vector<Attribute>* attrs, MPI_Comm handle);
// Runs the delete callbacks of every attribute, newest first, removing each;
// stops at the first callback that fails. MPI_Comm_free and MPI_Finalize
// (for MPI_COMM_SELF, then MPI_COMM_WORLD) call it.
int deleteAttributes(Comm* c, MPI_Comm handle);

}  // namespace loom::api
