/* Walking a superblock's accesses for strata's Valgrind tools (vg_accesses.h). */
#include "vg_accesses.h"

IRExpr* vg_bind(IRSB* sb, IRType ty, IRExpr* e) {
  IRTemp t = newIRTemp(sb->tyenv, ty);
  addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
  return IRExpr_RdTmp(t);
}

IRExpr* vg_load_word(IRSB* sb, const void* host_addr) {
  return vg_bind(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)host_addr)));
}

/* The address an access statement touches (NULL: not an access) and its guard. */
static IRExpr* access_of(const IRStmt* st, IRExpr** guard) {
  *guard = NULL;
  switch (st->tag) {
    case Ist_WrTmp:
      return st->Ist.WrTmp.data->tag == Iex_Load ? st->Ist.WrTmp.data->Iex.Load.addr : NULL;
    case Ist_Store:
      return st->Ist.Store.addr;
    case Ist_StoreG:
      *guard = st->Ist.StoreG.details->guard;
      return st->Ist.StoreG.details->addr;
    case Ist_LoadG:
      *guard = st->Ist.LoadG.details->guard;
      return st->Ist.LoadG.details->addr;
    case Ist_CAS:
      return st->Ist.CAS.details->addr;
    case Ist_LLSC:
      return st->Ist.LLSC.addr;
    case Ist_Dirty:
      return st->Ist.Dirty.details->mFx != Ifx_None ? st->Ist.Dirty.details->mAddr : NULL;
    default:
      return NULL;
  }
}

IRSB* vg_instrument_accesses(IRSB* sb_in, VgAccessOnInstr on_instr, VgAccessOnAccess on_access, void* opaque) {
  IRSB* sb = deepCopyIRSBExceptStmts(sb_in);
  Int i = 0;
  for (; i < sb_in->stmts_used && sb_in->stmts[i]->tag != Ist_IMark; i++) addStmtToIRSB(sb, sb_in->stmts[i]);
  Bool counted = True;
  for (; i < sb_in->stmts_used; i++) {
    IRStmt* st = sb_in->stmts[i];
    if (st == NULL || st->tag == Ist_NoOp) continue;
    if (st->tag == Ist_IMark) {
      counted = on_instr == NULL || on_instr(sb, st->Ist.IMark.addr, opaque);
    } else if (counted) {
      IRExpr* guard;
      IRExpr* addr = access_of(st, &guard);
      if (addr != NULL) on_access(sb, addr, guard, opaque);
    }
    addStmtToIRSB(sb, st);
  }
  return sb;
}
