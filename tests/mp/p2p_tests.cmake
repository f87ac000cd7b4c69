# Point-to-point tests: real jobs through loomrun (included from
# tests/mp/CMakeLists.txt, which defines loom_mp_program, loom_mp_test and
# LOOMRUN). Every program prints "<name>: rank R ok" per rank on success.
# Rank counts: odd, non-power-of-two, and 8 (oversubscribes a 2-core
# machine on purpose).
set(LOOM_P2P_RANKS 1 2 3 4 5 8)

foreach(p exchange order probe requests bsend count errors stress flood large)
  loom_mp_program(mp_p2p_${p} progs/p2p_${p}.c)
endforeach()

# loom_p2p_test(<test name> <program> <ranks> [TIMEOUT s] [ENV VAR=val...] [ARGS ...])
function(loom_p2p_test name prog n)
  cmake_parse_arguments(P "" "TIMEOUT" "ENV;ARGS" ${ARGN})
  if(NOT P_TIMEOUT)
    set(P_TIMEOUT 60)
  endif()
  set(env)
  foreach(e ${P_ENV})
    list(APPEND env -x ${e})
  endforeach()
  loom_mp_test(${name} TIMEOUT ${P_TIMEOUT}
               COMMAND --stdout-count "^p2p_${prog}: rank [0-9]+ ok=${n}"
               -- ${LOOMRUN} -n ${n} ${env} $<TARGET_FILE:mp_p2p_${prog}> ${P_ARGS})
endfunction()

foreach(n ${LOOM_P2P_RANKS})
  # (a) every size, mode and form, up to 16 MB; the derived-type variant
  # moves 3-byte blocks (5.6 M of them in a 16 MB message).
  loom_p2p_test(mp.p2p.exchange.${n} exchange ${n} TIMEOUT 120)
  loom_p2p_test(mp.p2p.exchange_vector.${n} exchange ${n} TIMEOUT 120 ARGS --vector)
  loom_p2p_test(mp.p2p.order.${n} order ${n} TIMEOUT 90)          # (b)
  loom_p2p_test(mp.p2p.probe.${n} probe ${n})                     # (c)
  loom_p2p_test(mp.p2p.requests.${n} requests ${n})               # (d)
  loom_p2p_test(mp.p2p.bsend.${n} bsend ${n})                     # (e)
  loom_p2p_test(mp.p2p.count.${n} count ${n})                     # (f)
  loom_p2p_test(mp.p2p.errors.${n} errors ${n})                   # (g)
endforeach()

# (a') the same 3-byte blocks placed irregularly (MPI_Type_indexed) and as
# a struct of four basic types, up to 16 MB.
foreach(n 2 3)
  loom_p2p_test(mp.p2p.exchange_indexed.${n} exchange ${n} TIMEOUT 120 ARGS --indexed)
  loom_p2p_test(mp.p2p.exchange_struct.${n} exchange ${n} TIMEOUT 120 ARGS --struct)
endforeach()

# (g) the default handler is fatal: the job ends, naming the error class.
foreach(n 1 3)
  math(EXPR last "${n} - 1")
  loom_mp_test(mp.p2p.errors_fatal.${n} TIMEOUT 60 COMMAND --exit-nonzero
               --stderr-re "rank ${last}: MPI_Send: MPI_ERR_RANK"
               -- ${LOOMRUN} -n ${n} $<TARGET_FILE:mp_p2p_errors> fatal)
endforeach()

# (h) randomized traffic, ~4 s each, fixed seeds so a failure reproduces.
loom_p2p_test(mp.p2p.stress.2 stress 2 TIMEOUT 60 ARGS 12345 4)
loom_p2p_test(mp.p2p.stress.5 stress 5 TIMEOUT 60 ARGS 777 4)
loom_p2p_test(mp.p2p.stress.8 stress 8 TIMEOUT 60 ARGS 4242 4)

# (i) every protocol forced: the exchange at 3 ranks (a pair plus a rank
# talking to itself) under each transport setting.
set(LOOM_P2P_PROTOCOLS
  "rndv_get:LOOM_SHM_RNDV=get"
  "rndv_pipeline:LOOM_SHM_RNDV=pipeline"
  "all_rndv:LOOM_SHM_EAGER_MAX=0"
  "all_eager:LOOM_SHM_EAGER_MAX=32m,LOOM_SHM_RING_BYTES=128m"
  "no_cma:LOOM_SHM_CMA=0"
  "tiny_ring:LOOM_SHM_RING_BYTES=4k"
  "nt_all:LOOM_SHM_RNDV=pipeline,LOOM_SHM_NT=1,LOOM_SHM_NT_MIN=1"
  "nt_auto:LOOM_SHM_RNDV=pipeline,LOOM_SHM_NT=auto,LOOM_SHM_NT_MIN=1"
  "nt_never:LOOM_SHM_RNDV=pipeline,LOOM_SHM_NT=0"
  "send_eager:LOOM_SHM_SEND_EAGER_MAX=64k"
  "send_eager_small_ring:LOOM_SHM_SEND_EAGER_MAX=64k,LOOM_SHM_RING_BYTES=256k")
# (A ring's largest record is about a quarter of it, so "everything eager"
# needs a 128 MB ring for the 16 MB message. send_eager: blocking sends up
# to 64 KiB into the ring, as on an oversubscribed node; with a 256 KiB ring
# the 64 KiB ones do not fit a record and a few 32 KiB ones fill it, so the
# sends fall back to the rendezvous behind them.)
foreach(p ${LOOM_P2P_PROTOCOLS})
  string(FIND "${p}" ":" colon)
  string(SUBSTRING "${p}" 0 ${colon} pname)
  math(EXPR from "${colon} + 1")
  string(SUBSTRING "${p}" ${from} -1 penv)
  string(REPLACE "," ";" penv "${penv}")
  # A 4 KiB ring moves 16 MB in ~16 000 wraps per message; 4 MB wraps as
  # often per byte and keeps the oversubscribed 3-rank run near 8 s
  # instead of ~30 s (~110 s on a loaded machine).
  set(_max "")
  if(pname STREQUAL "tiny_ring")
    set(_max ARGS --max 4194307)
  endif()
  loom_p2p_test(mp.p2p.exchange_${pname}.3 exchange 3 TIMEOUT 120 ENV ${penv} ${_max})
  loom_p2p_test(mp.p2p.exchange_vector_${pname}.2 exchange 2 TIMEOUT 120 ENV ${penv}
                ARGS --vector)
  loom_p2p_test(mp.p2p.order_${pname}.4 order 4 TIMEOUT 90 ENV ${penv})
endforeach()

# (j) 0 bytes and 2 GiB + 64 KiB (a derived type: no int byte count fits),
# every byte checked; 4 GiB of memory a job, so one at a time.
loom_p2p_test(mp.p2p.large.2 large 2 TIMEOUT 120)
set_tests_properties(mp.p2p.large.2 PROPERTIES RESOURCE_LOCK bigmem)
