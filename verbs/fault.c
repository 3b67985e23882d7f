/* Fault injection for tests (see fault.h). */
#include "verbs/fault.h"

verbs_faults_t verbs_faults;
