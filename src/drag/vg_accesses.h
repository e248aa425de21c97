/* What strata's Valgrind tools (strata-drag, strata-pages) share: walking a
   superblock's IR and handing every memory access the guest makes (loads,
   stores, guarded, atomic and SIMD ones, and helpers' memory effects) to the
   tool, which adds its own instrumentation in front of it. */
#ifndef STRATA_VG_ACCESSES_H
#define STRATA_VG_ACCESSES_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter" /* in Valgrind's headers */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#pragma GCC diagnostic pop

/* Called at each guest instruction (IMark) at ip: may add statements; returns
   whether the instruction's accesses are counted. */
typedef Bool (*VgAccessOnInstr)(IRSB* sb, Addr ip, void* opaque);
/* Called for one access at addr (guard: NULL or a 1-bit condition). */
typedef void (*VgAccessOnAccess)(IRSB* sb, IRExpr* addr, IRExpr* guard, void* opaque);

/* A copy of sb_in with on_access's instrumentation before every counted access. */
IRSB* vg_instrument_accesses(IRSB* sb_in, VgAccessOnInstr on_instr, VgAccessOnAccess on_access, void* opaque);

/* Flat IR wants atoms as operands: binds e to a new temporary. */
IRExpr* vg_bind(IRSB* sb, IRType ty, IRExpr* e);
/* The 64-bit word at a host address (a tool's variable). */
IRExpr* vg_load_word(IRSB* sb, const void* host_addr);

#endif
