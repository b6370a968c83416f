#ifndef MMUSIM_MM_H
#define MMUSIM_MM_H
#endif
