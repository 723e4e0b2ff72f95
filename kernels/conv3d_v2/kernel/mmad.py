"""MMadTools (conv3d_sub_api.h): one Mmad per K step. The first K step starts from zero, or from the bias table
(isBias, cmatrixSource) when there is a bias; the later ones accumulate."""
from __future__ import annotations

from ascend_sim.ascendc import Mmad, MmadParams


class MMadTools:
    def SetParams(self, conv) -> None:
        self.self_ = conv

    def SetMN(self, m: int, n: int) -> None:
        self.currentML0_, self.currentNL0_ = m, n

    def Mad(self, isFirst: bool, isLast: bool) -> None:
        c = self.self_
        p = MmadParams(m=self.currentML0_, n=self.currentNL0_, k=c.kL0Tail if isLast else c.singleCoreKL0)
        if not c.enableBias:
            p.cmatrixInitVal, p.cmatrixSource, p.isBias = isFirst, False, False
        else:
            p.cmatrixInitVal, p.cmatrixSource, p.isBias = False, isFirst, isFirst
        Mmad(c.cl0, c.al0, c.bl0, p)
