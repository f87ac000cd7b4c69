// Communicators built by the members of a group alone (MPI 5.0 §7.4.2):
// MPI_Comm_create_group (from a parent communicator, with an int tag) and
// MPI_Comm_create_from_group (from a session's group, with a string tag).
//
// Only the group's members call these, so the context id cannot be agreed
// over the parent as MPI_Comm_create does. The members run the same
// agreement (AND of their free-id masks, lowest id free everywhere;
// comm_internal.cc says why that is safe) among themselves: a binomial
// reduce to the group's rank 0 and a broadcast back, 2 ceil(log2 n) rounds
// of 512-byte messages. The messages travel on a context no communicator
// ever gets (kCtxGroupCreate, reserved at start-up) through a communicator
// spanning the job, so a message's source is a job rank and two groups that
// share processes cannot take each other's messages for their own. The tag
// separates concurrent creations: the int tag mixed with the parent's
// context id, or a hash of the string tag. Creations that reuse a tag one
// after the other are kept apart by MPI's non-overtaking order between a
// pair of processes.
#include <cstdint>
#include <cstring>
#include <vector>

#include "api/bsend.h"
#include "api/comm_internal.h"
#include "api/ctx_agree.h"
#include "api/info_internal.h"
#include "api/runtime.h"
#include "core/datatype.h"
#include "core/progress.h"
#include "p2p/p2p.h"

using loom::Comm;
using loom::ContextIdMask;
using loom::Errhandler;
using loom::errorf;
using loom::Group;
using loom::InfoEntries;
using loom::Request;
using loom::Status;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::rt;

namespace {

// The job-wide communicator on the reserved context, built on first use.
Comm* agreementComm() {
  static Comm* c = nullptr;
  if (!c) {
    rt().world->group()->retain();
    c = new Comm(loom::api::kCtxGroupCreate, rt().world->group(), rt().proc.rank,
                 "loom group creation");
  }
  return c;
}

// The lowest context id free on every member of `g` (the caller is member
// `me`), taken here: ctx_agree.cc's agreement, over the reserved context with
// group members mapped to job ranks.
Status agreeAmong(const Group& g, int me, int tag, uint32_t* id) {
  loom::api::AgreeSpec spec;
  spec.comm = agreementComm();
  spec.ranks.reserve(static_cast<size_t>(g.size()));
  for (int i = 0; i < g.size(); ++i) spec.ranks.push_back(g.jobRank(i));
  spec.me = me;
  spec.size = g.size();
  spec.tag = tag;
  return loom::api::agreeBlocking(std::move(spec), id);
}

// Tags on the reserved context: below 2^30, whatever the input.
int tagFrom(uint64_t h) { return static_cast<int>(h % 0x3fffffffu); }

uint64_t fnv1a(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// Agrees, then builds the caller's communicator over `g` (retained here).
Status createOver(Group* g, int tag, Errhandler* eh, const InfoEntries* hints, Comm** out) {
  int me = g->rankOf(rt().proc.rank);
  uint32_t ctx = 0;
  LOOM_TRY(agreeAmong(*g, me, tag, &ctx));
  g->retain();
  auto* c = new Comm(ctx, g, me, "");
  c->setOwnsContextId(true);
  c->setErrhandler(eh);
  if (hints) c->hints() = *hints;
  *out = c;
  return Status::ok();
}

}  // namespace

// Collective over the members of `group` only; every process of `group`
// must be in `comm`. A caller outside the group (or with the empty group)
// gets MPI_COMM_NULL without communicating.
extern "C" int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                      MPI_Comm* newcomm) {
  static const char* fn = "MPI_Comm_create_group";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* parent = loom::api::toComm(comm);
  if (!parent) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (parent->isInter())
    return raise(parent, errorf(MPI_ERR_COMM, "comm is an intercommunicator"), fn);
  Group* g = loom::api::toGroup(group);
  if (!g) return raise(parent, errorf(MPI_ERR_GROUP, "invalid group"), fn);
  if (!newcomm) return raise(parent, errorf(MPI_ERR_ARG, "newcomm is NULL"), fn);
  if (tag < 0) return raise(parent, errorf(MPI_ERR_TAG, "tag = %d is negative", tag), fn);
  for (int i = 0; i < g->size(); ++i)
    if (parent->group()->rankOf(g->jobRank(i)) == MPI_UNDEFINED)
      return raise(parent,
                   errorf(MPI_ERR_GROUP, "rank %d of the group is not in the communicator", i),
                   fn);
  if (g->rankOf(rt().proc.rank) == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  uint32_t key[2] = {parent->contextId(), static_cast<uint32_t>(tag)};
  Comm* c = nullptr;
  Status st = createOver(g, tagFrom(fnv1a(key, sizeof key)), parent->errhandler(), nullptr, &c);
  if (!st.isOk()) return raise(parent, st, fn);
  c->setOrigin("create_group of " + loom::api::commLabel(parent));
  *newcomm = loom::api::toHandle(c);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_create_group)

// The sessions model's constructor: collective over the members of `group`,
// which agree through `stringtag`. `errhandler` becomes the new
// communicator's, and reports this call's errors (MPI_ERRHANDLER_NULL means
// MPI_ERRORS_ARE_FATAL).
extern "C" int PMPI_Comm_create_from_group(MPI_Group group, const char* stringtag, MPI_Info info,
                                           MPI_Errhandler errhandler, MPI_Comm* newcomm) {
  static const char* fn = "MPI_Comm_create_from_group";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Errhandler* eh = errhandler == MPI_ERRHANDLER_NULL ? &loom::gErrorsAreFatal
                                                     : loom::api::toErrhandler(errhandler);
  if (!eh)
    return loom::api::raiseNoObject(
        errorf(MPI_ERR_ERRHANDLER, "errhandler is not a predefined error handler"), fn);
  // Errors go to `eh`: lend it to a stand-in, as there is no communicator yet.
  Comm standIn(0, std::vector<int>{}, 0, "MPI_Comm_create_from_group");
  standIn.setErrhandler(eh);
  Group* g = loom::api::toGroup(group);
  if (!g) return raise(&standIn, errorf(MPI_ERR_GROUP, "invalid group"), fn);
  if (!stringtag || !newcomm)
    return raise(&standIn, errorf(MPI_ERR_ARG, "stringtag or newcomm is NULL"), fn);
  size_t len = strnlen(stringtag, MPI_MAX_STRINGTAG_LEN);
  if (len >= MPI_MAX_STRINGTAG_LEN)
    return raise(&standIn,
                 errorf(MPI_ERR_ARG, "stringtag is longer than %d characters",
                        MPI_MAX_STRINGTAG_LEN - 1),
                 fn);
  InfoEntries hints;
  if (info != MPI_INFO_NULL) {
    loom::Info* i = loom::api::toInfo(info);
    if (!i) return raise(&standIn, errorf(MPI_ERR_INFO, "invalid info object"), fn);
    for (const auto& [k, v] : i->entries())
      if (loom::api::isCommHint(k)) loom::infoSet(hints, k, v);  // recognised keys only
  }
  if (g->rankOf(rt().proc.rank) == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  Comm* c = nullptr;
  // "loom:" keeps these hashes apart from create_group's.
  Status st = createOver(g, tagFrom(fnv1a(stringtag, len, fnv1a("loom:", 5))), eh, &hints, &c);
  if (!st.isOk()) return raise(&standIn, st, fn);
  if (g->session()) loom::api::noteCommSession(c, g->session());
  c->setOrigin(std::string("create_from_group \"") + stringtag + "\"");
  *newcomm = loom::api::toHandle(c);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_create_from_group)
