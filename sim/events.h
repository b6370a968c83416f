#ifndef MMUSIM_EVENTS_H
#define MMUSIM_EVENTS_H
#endif
