#ifndef MMUSIM_ENGINE_H
#define MMUSIM_ENGINE_H
#endif
