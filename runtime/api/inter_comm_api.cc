// Intercommunicator constructors and queries (MPI 5.0 §7.6):
// MPI_Intercomm_create, MPI_Intercomm_create_from_groups,
// MPI_Intercomm_merge, MPI_Comm_remote_size, MPI_Comm_remote_group.
// inter_comm.cc has the agreement they share; MPI_Comm_dup, split, create,
// compare and test_inter reach it from comm_mgmt_api.cc.
#include <cstring>
#include <vector>

#include "api/comm_internal.h"
#include "api/info_internal.h"
#include "api/inter_comm.h"
#include "api/inter_internal.h"
#include "api/runtime.h"
#include "api/status_util.h"

using loom::Comm;
using loom::Errhandler;
using loom::errorf;
using loom::Group;
using loom::Status;
using loom::api::Joined;
using loom::api::LeaderLink;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::rt;
using loom::api::toComm;

namespace {

int badComm(const char* fn) {
  return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
}

// The leaders of MPI_Intercomm_create meet on peer_comm's collective
// channel with the user's tag in a range no collective and no internal
// helper uses (they stay below 2^23), so pending user messages on peer_comm
// are never taken for the leaders' and vice versa.
int leaderTag(int tag) {
  return 0x40000000 | tag;
}

// MPI_Intercomm_create_from_groups' leaders have no communicator in
// common: they meet on the reserved context of MPI_Comm_create_from_group
// (comm_internal.h, kCtxGroupCreate), whose sources are job ranks, with a
// hash of the string tag above that call's tags (which stay below 2^30).
Comm* jobWideComm() {
  static Comm* c = nullptr;
  if (!c) {
    rt().world->group()->retain();
    c = new Comm(loom::api::kCtxGroupCreate, rt().world->group(), rt().proc.rank,
                 "loom intercommunicator leaders");
  }
  return c;
}

int stringTag(const char* s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char* p = "loom-inter:"; *p; ++p)
    h = (h ^ static_cast<unsigned char>(*p)) * 0x100000001b3ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 0x100000001b3ull;
  return 0x40000000 | static_cast<int>(h % 0x3fffffffu);
}

}  // namespace

// Collective over the union of both local communicators. Arguments that
// only the local leader reads (peer_comm, remote_leader, tag) are checked
// there; a wrong one fails the leader's whole side (the other side, whose
// leader waits for a partner, cannot be told).
extern "C" int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                                     int remote_leader, int tag, MPI_Comm* newintercomm) {
  static const char* fn = "MPI_Intercomm_create";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* local = toComm(local_comm);
  if (!local) return badComm(fn);
  if (local->isInter())
    return raise(local, errorf(MPI_ERR_COMM, "local_comm is an intercommunicator"), fn);
  if (!newintercomm) return raise(local, errorf(MPI_ERR_ARG, "newintercomm is NULL"), fn);
  if (local_leader < 0 || local_leader >= local->size())
    return raise(local,
                 errorf(MPI_ERR_RANK, "local_leader = %d is not a rank of local_comm (size %d)",
                        local_leader, local->size()),
                 fn);
  Status atLeader;
  Comm* peer = nullptr;
  if (local->rank() == local_leader) {
    peer = toComm(peer_comm);
    if (!peer)
      atLeader = errorf(MPI_ERR_COMM, "peer_comm is not a valid communicator");
    else if (remote_leader < 0 || remote_leader >= peer->peerSize())
      atLeader = errorf(MPI_ERR_RANK, "remote_leader = %d is not a rank of peer_comm (size %d)",
                        remote_leader, peer->peerSize());
    else if (peer->worldRank(remote_leader) == rt().proc.rank)
      atLeader =
          errorf(MPI_ERR_RANK, "remote_leader = %d is the local leader itself", remote_leader);
    else if (!loom::api::validSendTag(tag))
      atLeader = errorf(MPI_ERR_TAG, "tag = %d is not in [0, %d]", tag, loom::kTagUb);
  }
  Comm* hidden = nullptr;
  Status st = loom::api::hiddenLocal(local, &hidden);
  if (!st.isOk()) return raise(local, st, fn);
  Joined j;
  st = loom::api::joinSides(local, local_leader,
                            LeaderLink{peer, remote_leader, leaderTag(tag), &atLeader}, 0, &j);
  if (!st.isOk()) {
    Comm::release(hidden);
    return raise(local, st, fn);
  }
  local->group()->retain();
  Comm* c = loom::api::buildInter(j.ctx, local->group(), local->rank(),
                                  new Group(std::move(j.remote)), hidden, local->errhandler());
  *newintercomm = loom::api::toHandle(c);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Intercomm_create)

// The sessions model's form: no communicator needed. The local group
// builds its intracommunicator with MPI_Comm_create_from_group (it becomes
// the hidden local side), then the leaders meet on the job-wide reserved
// context. `errhandler` reports this call's errors and becomes the new
// communicator's (MPI_ERRHANDLER_NULL: MPI_ERRORS_ARE_FATAL).
extern "C" int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                                 MPI_Group remote_group, int remote_leader,
                                                 const char* stringtag, MPI_Info info,
                                                 MPI_Errhandler errhandler,
                                                 MPI_Comm* newintercomm) {
  static const char* fn = "MPI_Intercomm_create_from_groups";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Errhandler* eh = errhandler == MPI_ERRHANDLER_NULL ? &loom::gErrorsAreFatal
                                                     : loom::api::toErrhandler(errhandler);
  if (!eh)
    return loom::api::raiseNoObject(
        errorf(MPI_ERR_ERRHANDLER, "errhandler is not a predefined error handler"), fn);
  Comm standIn(0, std::vector<int>{}, 0, fn);
  standIn.setErrhandler(eh);
  Group* lg = loom::api::toGroup(local_group);
  Group* rg = loom::api::toGroup(remote_group);
  if (!lg || !rg) return raise(&standIn, errorf(MPI_ERR_GROUP, "invalid group"), fn);
  if (!stringtag || !newintercomm)
    return raise(&standIn, errorf(MPI_ERR_ARG, "stringtag or newintercomm is NULL"), fn);
  const size_t len = strnlen(stringtag, MPI_MAX_STRINGTAG_LEN);
  if (len >= MPI_MAX_STRINGTAG_LEN)
    return raise(
        &standIn,
        errorf(MPI_ERR_ARG, "stringtag is longer than %d characters", MPI_MAX_STRINGTAG_LEN - 1),
        fn);
  const int me = lg->rankOf(rt().proc.rank);
  if (me == MPI_UNDEFINED)
    return raise(&standIn, errorf(MPI_ERR_GROUP, "the calling process is not in local_group"), fn);
  if (local_leader < 0 || local_leader >= lg->size())
    return raise(&standIn,
                 errorf(MPI_ERR_RANK, "local_leader = %d is not a rank of local_group (size %d)",
                        local_leader, lg->size()),
                 fn);
  if (remote_leader < 0 || remote_leader >= rg->size())
    return raise(&standIn,
                 errorf(MPI_ERR_RANK, "remote_leader = %d is not a rank of remote_group (size %d)",
                        remote_leader, rg->size()),
                 fn);
  if (rg->rankOf(rt().proc.rank) != MPI_UNDEFINED)
    return raise(&standIn,
                 errorf(MPI_ERR_GROUP,
                        "the calling process is in both local_group and "
                        "remote_group"),
                 fn);
  loom::InfoEntries hints;
  if (info != MPI_INFO_NULL) {
    loom::Info* i = loom::api::toInfo(info);
    if (!i) return raise(&standIn, errorf(MPI_ERR_INFO, "invalid info object"), fn);
    for (const auto& [k, v] : i->entries())
      if (loom::api::isCommHint(k)) loom::infoSet(hints, k, v);  // recognised keys only
  }
  MPI_Comm lc = MPI_COMM_NULL;
  int rc =
      PMPI_Comm_create_from_group(local_group, stringtag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &lc);
  if (rc != MPI_SUCCESS)
    return raise(&standIn, errorf(rc, "the local group's communicator could not be built"), fn);
  Comm* hidden = toComm(lc);
  hidden->setName("loom intercommunicator local side");
  Joined j;
  Status st = loom::api::joinSides(
      hidden, local_leader,
      LeaderLink{jobWideComm(), rg->jobRank(remote_leader), stringTag(stringtag, len)}, 0, &j);
  if (!st.isOk()) {
    Comm::free(hidden);
    return raise(&standIn, st, fn);
  }
  lg->retain();
  Comm* c = loom::api::buildInter(j.ctx, lg, me, new Group(std::move(j.remote)), hidden, eh);
  c->hints() = std::move(hints);
  *newintercomm = loom::api::toHandle(c);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Intercomm_create_from_groups)

// The union of both groups as an intracommunicator: the group whose
// processes passed high = false first. When both passed the same value the
// standard leaves the order to the implementation; Loom puts first the
// group whose rank 0 has the lower rank in MPI_COMM_WORLD (the job), so
// the order is the same whichever side looks.
extern "C" int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  static const char* fn = "MPI_Intercomm_merge";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(intercomm);
  if (!c) return badComm(fn);
  if (!c->isInter()) return raise(c, errorf(MPI_ERR_COMM, "intercomm is an intracommunicator"), fn);
  if (!newintracomm) return raise(c, errorf(MPI_ERR_ARG, "newintracomm is NULL"), fn);
  const int mine = high ? 1 : 0;
  Joined j;
  Status st = loom::api::joinSides(c->localComm(), 0, LeaderLink{c, 0, loom::api::kTagInterLeaders},
                                   mine, &j);
  if (!st.isOk()) return raise(c, st, fn);
  const std::vector<int>& ours = c->group()->jobRanks();
  const bool oursFirst = mine != j.remoteHigh ? !mine : ours[0] < j.remote[0];
  std::vector<int> all;
  all.reserve(ours.size() + j.remote.size());
  const std::vector<int>& a = oursFirst ? ours : j.remote;
  const std::vector<int>& b = oursFirst ? j.remote : ours;
  all.insert(all.end(), a.begin(), a.end());
  all.insert(all.end(), b.begin(), b.end());
  const int rank = (oursFirst ? 0 : static_cast<int>(j.remote.size())) + c->rank();
  loom::contextIds().take(j.ctx);
  auto* m = new Comm(j.ctx, std::move(all), rank, "");
  m->setOwnsContextId(true);
  m->setErrhandler(c->errhandler());
  *newintracomm = loom::api::toHandle(m);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Intercomm_merge)

extern "C" int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  static const char* fn = "MPI_Comm_remote_size";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return badComm(fn);
  if (!c->isInter()) return raise(c, errorf(MPI_ERR_COMM, "comm is an intracommunicator"), fn);
  if (!size) return raise(c, errorf(MPI_ERR_ARG, "size is NULL"), fn);
  *size = c->remoteGroup()->size();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_remote_size)

extern "C" int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  static const char* fn = "MPI_Comm_remote_group";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return badComm(fn);
  if (!c->isInter()) return raise(c, errorf(MPI_ERR_COMM, "comm is an intracommunicator"), fn);
  if (!group) return raise(c, errorf(MPI_ERR_ARG, "group is NULL"), fn);
  c->remoteGroup()->retain();
  *group = loom::api::toHandle(c->remoteGroup());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_remote_group)
