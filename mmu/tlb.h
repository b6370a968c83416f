#ifndef MMUSIM_TLB_H
#define MMUSIM_TLB_H
#endif
