// Communicator management (MPI 5.0 §7.4): dup, split, create, free,
// compare, names.
//
// Every constructor is collective over the parent and follows the same two
// steps: learn who the members are (split needs everyone's color and key:
// one small allgather), then agree on a context id free on every process of
// the parent (an allreduce-AND of the id bitmask, ctx_agree.cc). The
// members take the id; the new communicator inherits the parent's error
// handler. MPI_Comm_dup also copies the attributes through their copy
// callbacks; names are never inherited.
#include <algorithm>
#include <cstring>
#include <vector>

#include "api/comm_internal.h"
#include "api/ctx_agree.h"
#include "api/info_internal.h"
#include "api/inter_comm.h"
#include "api/runtime.h"
#include "core/request.h"

using loom::Comm;
using loom::errorf;
using loom::Group;
using loom::Status;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::rt;
using loom::api::toComm;

namespace {

int badComm(const char* fn) {
  return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
}

// The calling process's share of a new communicator whose context id `ctx`
// the parent's processes agreed on. Adopts the reference to `g`.
Comm* makeComm(Comm* parent, uint32_t ctx, Group* g, const char* how) {
  loom::contextIds().take(ctx);
  auto* c = new Comm(ctx, g, g->rankOf(rt().proc.rank), "");
  c->setOrigin(std::string(how) + " of " + loom::api::commLabel(parent));
  c->setOwnsContextId(true);
  c->setErrhandler(parent->errhandler());
  return c;
}

}  // namespace

namespace loom::api {

// `hints` null: the parent's hints are copied (MPI_Comm_dup, MPI_Comm_idup).
int dupComm(MPI_Comm comm, const InfoEntries* hints, MPI_Comm* newcomm, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* parent = toComm(comm);
  if (!parent) return badComm(fn);
  if (!newcomm) return raise(parent, errorf(MPI_ERR_ARG, "newcomm is NULL"), fn);
  Comm* c = nullptr;
  if (parent->isInter()) {
    Status st = loom::api::dupInter(parent, &c);
    if (!st.isOk()) return raise(parent, st, fn);
  } else {
    uint32_t ctx;
    Status st = loom::api::agreeContextId(parent, &ctx);
    if (!st.isOk()) return raise(parent, st, fn);
    parent->group()->retain();
    c = makeComm(parent, ctx, parent->group(), "dup");
  }
  if (parent->isInter()) c->setOrigin("dup of " + loom::api::commLabel(parent));
  c->hints() = hints ? *hints : parent->hints();
  c->setTopo(parent->topo());  // a duplicate keeps the process topology
  int rc = loom::api::copyAttributes(parent, comm, c);
  if (rc != MPI_SUCCESS) {
    // The copies made so far are deleted again, with their callbacks.
    (void)loom::api::deleteAttributes(c, loom::api::toHandle(c));
    Comm::free(c);
    *newcomm = MPI_COMM_NULL;
    return raise(parent, errorf(rc, "an attribute copy callback returned %d", rc), fn);
  }
  *newcomm = loom::api::toHandle(c);
  return MPI_SUCCESS;
}

// The nonblocking form: the context-id agreement runs in the background
// (ctx_agree.cc) and its end builds the communicator, copies the attributes,
// writes *newcomm and completes the request. So the call returns at once and
// needs no other process to be inside MPI meanwhile; an intercommunicator's
// two sides agree in one such agreement.
int idupComm(MPI_Comm comm, const InfoEntries* hints, MPI_Comm* newcomm, MPI_Request* request,
             const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* parent = toComm(comm);
  if (!parent) return badComm(fn);
  if (!request) return raise(parent, errorf(MPI_ERR_ARG, "request is NULL"), fn);
  if (!newcomm) return raise(parent, errorf(MPI_ERR_ARG, "newcomm is NULL"), fn);
  loom::Request* r = loom::Request::alloc(loom::ReqKind::kColl);
  r->active = true;
  r->comm = parent;
  parent->retain();
  r->holdsRefs = true;
  InfoEntries h = hints ? *hints : parent->hints();
  // The attributes are copied now: the standard has the call behave as if
  // MPI_Comm_dup ran when it was made. A copy callback that fails still
  // lets the agreement run (the other processes are in it) and fails the
  // request when it ends.
  std::vector<loom::Attribute> copies;
  const int copied = loom::api::copyAttributesInto(parent, comm, &copies);
  loom::api::AgreeSpec spec;
  spec.comm = parent;
  spec.me = parent->rank();
  spec.size = parent->size();
  spec.tag = loom::api::kTagAgreeBase + parent->nextCollectiveTag();
  if (parent->isInter()) {
    // Both sides agree together on two ids: the intercommunicator's and the
    // hidden local communicators'. Members: the side holding the lowest job
    // rank first, each side in rank order; the other side is reached
    // through the intercommunicator, the own side through its hidden
    // local communicator.
    Group* local = parent->group();
    Group* remote = parent->remoteGroup();
    auto lowest = [](Group* g) {
      int m = INT32_MAX;
      for (int i = 0; i < g->size(); ++i) m = std::min(m, g->jobRank(i));
      return m;
    };
    const bool localFirst = lowest(local) < lowest(remote);
    auto addSide = [&](bool own) {
      Group* g = own ? local : remote;
      for (int i = 0; i < g->size(); ++i)
        spec.peers.push_back({own ? parent->localComm() : parent, i});
    };
    addSide(localFirst);
    addSide(!localFirst);
    spec.size = local->size() + remote->size();
    spec.me = localFirst ? parent->rank() : remote->size() + parent->rank();
    spec.ids = 2;
    spec.tag += loom::api::kTagAgreeInterBase - loom::api::kTagAgreeBase;
  }
  *request = reinterpret_cast<MPI_Request>(r);
  loom::api::startAgreement(
      std::move(spec), [parent, h = std::move(h), newcomm, r, copied,
                        copies = std::move(copies)](Status st, uint32_t ctx,
                                                    uint32_t hidden) mutable {
        if (st.isOk() && copied != MPI_SUCCESS) {
          loom::contextIds().give(ctx);  // taken by the agreement; no communicator
          if (parent->isInter()) loom::contextIds().give(hidden);
          st = errorf(copied, "an attribute copy callback returned %d", copied);
        }
        if (st.isOk()) {
          Comm* c = nullptr;
          if (parent->isInter()) {
            c = loom::api::buildDupInter(parent, ctx, hidden);
            c->setOrigin("idup of " + loom::api::commLabel(parent));
          } else {
            parent->group()->retain();
            c = makeComm(parent, ctx, parent->group(), "idup");
          }
          c->hints() = h;
          c->setTopo(parent->topo());
          c->attributes() = std::move(copies);
          *newcomm = loom::api::toHandle(c);
        } else {
          // The copies made at the call go with their delete callbacks; the
          // communicator they were for never came to be (MPI_COMM_NULL).
          (void)loom::api::deleteAttributeList(&copies, MPI_COMM_NULL);
          *newcomm = MPI_COMM_NULL;
        }
        if (!st.isOk()) {
          r->statusError = st.code();
          r->error = st;
        }
        r->finish();
      });
  return MPI_SUCCESS;
}

}  // namespace loom::api

namespace {

// Split by (color, key): members of a color ordered by key, ties by parent
// rank. Shared by MPI_Comm_split and MPI_Comm_split_type.
int splitComm(Comm* parent, int color, int key, MPI_Comm* newcomm, const char* fn,
              const char* how) {
  struct Record {
    int color, key;
  };
  Record mine{color, key};
  std::vector<Record> all(parent->size());
  Status st = loom::api::allgatherSmall(parent, &mine, sizeof mine, all.data());
  uint32_t ctx = 0;
  if (st.isOk()) st = loom::api::agreeContextId(parent, &ctx);
  if (!st.isOk()) return raise(parent, st, fn);
  if (color == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  std::vector<int> members;  // parent ranks
  for (int i = 0; i < parent->size(); ++i)
    if (all[i].color == color) members.push_back(i);
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return all[a].key < all[b].key; });
  std::vector<int> jobRanks;
  jobRanks.reserve(members.size());
  for (int i : members) jobRanks.push_back(parent->worldRank(i));
  *newcomm = loom::api::toHandle(makeComm(parent, ctx, new Group(std::move(jobRanks)), how));
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return loom::api::dupComm(comm, nullptr, newcomm, "MPI_Comm_dup");
}
LOOM_WEAK_ALIAS(MPI_Comm_dup)

// Nonblocking: see idupComm.
extern "C" int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  return loom::api::idupComm(comm, nullptr, newcomm, request, "MPI_Comm_idup");
}
LOOM_WEAK_ALIAS(MPI_Comm_idup)

extern "C" int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  static const char* fn = "MPI_Comm_split";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* parent = toComm(comm);
  if (!parent) return badComm(fn);
  if (!newcomm) return raise(parent, errorf(MPI_ERR_ARG, "newcomm is NULL"), fn);
  if (color < 0 && color != MPI_UNDEFINED)
    return raise(parent,
                 errorf(MPI_ERR_ARG,
                        "color = %d is negative (and not "
                        "MPI_UNDEFINED)",
                        color),
                 fn);
  if (parent->isInter()) {
    Comm* c = nullptr;
    Status st = loom::api::splitInter(parent, color, key, &c);
    if (!st.isOk()) return raise(parent, st, fn);
    *newcomm = loom::api::toHandle(c);
    return MPI_SUCCESS;
  }
  return splitComm(parent, color, key, newcomm, fn, "split");
}
LOOM_WEAK_ALIAS(MPI_Comm_split)

// MPI_COMM_TYPE_SHARED groups the processes of one node (the node ids every
// process published at MPI_Init). The hardware- and resource-guided types
// take the resource from the info key "mpi_hw_resource_type": Loom knows
// "mpi_shared_memory" (the node, as MPI_COMM_TYPE_SHARED); for any other
// value, no info or MPI_COMM_TYPE_HW_UNGUIDED every process gets
// MPI_COMM_NULL, which the standard allows. Every process still takes part
// in the split, since the types may differ between processes.
extern "C" int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                    MPI_Comm* newcomm) {
  static const char* fn = "MPI_Comm_split_type";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* parent = toComm(comm);
  if (!parent) return badComm(fn);
  if (!newcomm) return raise(parent, errorf(MPI_ERR_ARG, "newcomm is NULL"), fn);
  // This process's node (rt().proc.rank is its job rank: on an
  // intercommunicator worldRank() names the remote group).
  const int node = rt().locality[rt().proc.rank].nodeId;
  int color;
  switch (split_type) {
    case MPI_COMM_TYPE_SHARED:
      color = node;
      break;
    case MPI_COMM_TYPE_HW_GUIDED:
    case MPI_COMM_TYPE_RESOURCE_GUIDED: {
      color = MPI_UNDEFINED;
      if (info == MPI_INFO_NULL) break;
      loom::Info* i = loom::api::toInfo(info);
      if (!i) return raise(parent, errorf(MPI_ERR_INFO, "invalid info object"), fn);
      int k = loom::infoFind(i->entries(), "mpi_hw_resource_type");
      if (k >= 0 && i->entries()[k].second == "mpi_shared_memory") color = node;
      break;
    }
    case MPI_UNDEFINED:
    case MPI_COMM_TYPE_HW_UNGUIDED:
      color = MPI_UNDEFINED;
      break;
    default:
      return raise(parent, errorf(MPI_ERR_ARG, "split_type = %d is not a split type", split_type),
                   fn);
  }
  if (parent->isInter()) {  // an intercommunicator of the local pieces, as split makes
    Comm* c = nullptr;
    Status st = loom::api::splitInter(parent, color, key, &c);
    if (!st.isOk()) return raise(parent, st, fn);
    *newcomm = loom::api::toHandle(c);
    return MPI_SUCCESS;
  }
  return splitComm(parent, color, key, newcomm, fn, "split_type");
}
LOOM_WEAK_ALIAS(MPI_Comm_split_type)

extern "C" int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  static const char* fn = "MPI_Comm_create";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* parent = toComm(comm);
  if (!parent) return badComm(fn);
  Group* g = loom::api::toGroup(group);
  if (!g) return raise(parent, errorf(MPI_ERR_GROUP, "invalid group"), fn);
  if (!newcomm) return raise(parent, errorf(MPI_ERR_ARG, "newcomm is NULL"), fn);
  // Every process passes the same group, so they all fail here together.
  for (int i = 0; i < g->size(); ++i)
    if (parent->group()->rankOf(g->jobRank(i)) == MPI_UNDEFINED)
      return raise(parent,
                   errorf(MPI_ERR_GROUP,
                          "rank %d of the group is not in the "
                          "communicator",
                          i),
                   fn);
  if (parent->isInter()) {
    Comm* c = nullptr;
    Status st = loom::api::createInter(parent, g, &c);
    if (!st.isOk()) return raise(parent, st, fn);
    *newcomm = loom::api::toHandle(c);
    return MPI_SUCCESS;
  }
  uint32_t ctx;
  Status st = loom::api::agreeContextId(parent, &ctx);
  if (!st.isOk()) return raise(parent, st, fn);
  if (g->rankOf(rt().proc.rank) == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  g->retain();
  *newcomm = loom::api::toHandle(makeComm(parent, ctx, g, "create"));
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_create)

extern "C" int PMPI_Comm_free(MPI_Comm* comm) {
  static const char* fn = "MPI_Comm_free";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!comm) return raise(nullptr, errorf(MPI_ERR_ARG, "comm is NULL"), fn);
  Comm* c = toComm(*comm);
  if (!c) return badComm(fn);
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
    return raise(c, errorf(MPI_ERR_COMM, "%s cannot be freed", c->name().c_str()), fn);
  int rc = loom::api::deleteAttributes(c, *comm);
  if (rc != MPI_SUCCESS)
    return raise(c, errorf(rc, "an attribute delete callback returned %d", rc), fn);
  Comm::free(c);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_free)

extern "C" int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  static const char* fn = "MPI_Comm_compare";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* a = toComm(comm1);
  Comm* b = toComm(comm2);
  if (!a || !b) return badComm(fn);
  if (!result) return raise(a, errorf(MPI_ERR_ARG, "result is NULL"), fn);
  if (a == b || a->isInter() || b->isInter()) {
    *result = loom::api::compareInter(a, b);
    return MPI_SUCCESS;
  }
  int g = loom::groupCompare(*a->group(), *b->group());
  *result = g == MPI_IDENT ? MPI_CONGRUENT : g;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_compare)

extern "C" int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  static const char* fn = "MPI_Comm_group";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return badComm(fn);
  if (!group) return raise(c, errorf(MPI_ERR_ARG, "group is NULL"), fn);
  // The user's group shares the communicator's list: one more reference.
  c->group()->retain();
  *group = loom::api::toHandle(c->group());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_group)

extern "C" int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  static const char* fn = "MPI_Comm_set_name";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return badComm(fn);
  if (!comm_name) return raise(c, errorf(MPI_ERR_ARG, "comm_name is NULL"), fn);
  // Longer names are truncated to what MPI_Comm_get_name can return.
  c->setName(std::string(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1)));
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_set_name)

extern "C" int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  static const char* fn = "MPI_Comm_get_name";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  // The null handle has a name too (MPI 4.1: "MPI_COMM_NULL").
  Comm* c = comm == MPI_COMM_NULL ? nullptr : toComm(comm);
  if (!c && comm != MPI_COMM_NULL) return badComm(fn);
  if (!comm_name || !resultlen)
    return raise(c, errorf(MPI_ERR_ARG, "comm_name or resultlen is NULL"), fn);
  static const std::string kNull = "MPI_COMM_NULL";
  const std::string& n = c ? c->name() : kNull;
  std::memcpy(comm_name, n.c_str(), n.size() + 1);
  *resultlen = static_cast<int>(n.size());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_get_name)

extern "C" int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  static const char* fn = "MPI_Comm_test_inter";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return badComm(fn);
  if (!flag) return raise(c, errorf(MPI_ERR_ARG, "flag is NULL"), fn);
  *flag = c->isInter() ? 1 : 0;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_test_inter)
