#ifndef MMUSIM_X86_64_H
#define MMUSIM_X86_64_H
#endif
