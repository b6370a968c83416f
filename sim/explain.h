#ifndef MMUSIM_EXPLAIN_H
#define MMUSIM_EXPLAIN_H
#endif
