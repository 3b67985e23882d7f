/* The names the variable browser prints for the tool interface's constants. */
#include <ibmsg/tool.h>

#include <stddef.h>

#include "browser/pvars.h"

const char *pvars_datatype_name(ibmsg_t_datatype_t datatype)
{
    switch (datatype) {
    case IBMSG_T_INT:
        return "INT";
    case IBMSG_T_UNSIGNED:
        return "UNSIGNED";
    case IBMSG_T_UNSIGNED_LONG:
        return "UNSIGNED_LONG";
    case IBMSG_T_UNSIGNED_LONG_LONG:
        return "UNSIGNED_LONG_LONG";
    case IBMSG_T_COUNT:
        return "COUNT";
    case IBMSG_T_CHAR:
        return "CHAR";
    case IBMSG_T_DOUBLE:
        return "DOUBLE";
    case IBMSG_T_DATATYPE_NULL:
        break;
    }
    return "UNKNOWN";
}

size_t pvars_datatype_size(ibmsg_t_datatype_t datatype)
{
    switch (datatype) {
    case IBMSG_T_INT:
        return sizeof(int);
    case IBMSG_T_UNSIGNED:
        return sizeof(unsigned);
    case IBMSG_T_UNSIGNED_LONG:
        return sizeof(unsigned long);
    case IBMSG_T_UNSIGNED_LONG_LONG:
        return sizeof(unsigned long long);
    case IBMSG_T_COUNT:
        return sizeof(long long);
    case IBMSG_T_CHAR:
        return sizeof(char);
    case IBMSG_T_DOUBLE:
        return sizeof(double);
    case IBMSG_T_DATATYPE_NULL:
        break;
    }
    return 0;
}

const char *pvars_class_name(int var_class)
{
    static const char *const names[] = {"STATE",         "LEVEL",        "SIZE",    "PERCENTAGE",
                                        "HIGHWATERMARK", "LOWWATERMARK", "COUNTER", "AGGREGATE",
                                        "TIMER",         "GENERIC"};
    int i = var_class - IBMSG_T_PVAR_CLASS_STATE;

    return (i >= 0 && i < (int)(sizeof(names) / sizeof(names[0]))) ? names[i] : "UNKNOWN";
}

const char *pvars_scope_name(int scope)
{
    static const char *const names[] = {"CONSTANT", "READONLY", "LOCAL", "GROUP",
                                        "GROUP_EQ", "ALL",      "ALL_EQ"};
    int i = scope - IBMSG_T_SCOPE_CONSTANT;

    return (i >= 0 && i < (int)(sizeof(names) / sizeof(names[0]))) ? names[i] : "UNKNOWN";
}

const char *pvars_verbosity_name(int verbosity)
{
    static const char *const names[] = {"USER_BASIC",   "USER_DETAIL",   "USER_ALL",
                                        "TUNER_BASIC",  "TUNER_DETAIL",  "TUNER_ALL",
                                        "MPIDEV_BASIC", "MPIDEV_DETAIL", "MPIDEV_ALL"};
    int i = verbosity - IBMSG_T_VERBOSITY_USER_BASIC;

    return (i >= 0 && i < (int)(sizeof(names) / sizeof(names[0]))) ? names[i] : "UNKNOWN";
}
