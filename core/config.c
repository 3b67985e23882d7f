/* Context settings: control variables and info hints (see config.h). */
#include "core/config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <ibmsg/status.h>

#include "util/log.h"

typedef struct config_int_desc {
    const char *name;
    size_t offset;
    int64_t min, max;
} config_int_desc_t;

static const config_int_desc_t config_ints[] = {
#define CORE_CONFIG_DESC(field, name, def, min, max, desc) \
    {name, offsetof(core_config_t, field), min, max},
    CORE_CONFIG_INT_LIST(CORE_CONFIG_DESC)
#undef CORE_CONFIG_DESC
};

/* The control variables' values: defaults for every new context. */
static core_config_t config_cvars = {.device = "",
#define CORE_CONFIG_DEFAULT(field, name, def, min, max, desc) .field = def,
                                     CORE_CONFIG_INT_LIST(CORE_CONFIG_DEFAULT)
#undef CORE_CONFIG_DEFAULT
};
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static int64_t *config_field(core_config_t *cfg, const config_int_desc_t *d)
{
    return (int64_t *)((char *)cfg + d->offset);
}

static int parse_int(const char *s, int64_t *value)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0') {
        return 0;
    }
    *value = v;
    return 1;
}

/* IBMSG_<NAME> from the environment, once, as the control variables' initial values. */
static void config_from_env(void)
{
    const char *dev = getenv("IBMSG_DEVICE");

    if (dev != NULL) {
        if (strlen(dev) < sizeof(config_cvars.device)) {
            strcpy(config_cvars.device, dev);
        } else {
            util_warn("IBMSG_DEVICE=%s: longer than %d bytes, ignored", dev,
                      CORE_CONFIG_DEVICE_MAX - 1);
        }
    }
    for (size_t i = 0; i < sizeof(config_ints) / sizeof(config_ints[0]); i++) {
        const config_int_desc_t *d = &config_ints[i];
        char env[64] = "IBMSG_";
        const char *s;
        int64_t v;
        size_t n = strlen(env);

        for (const char *p = d->name; *p != '\0' && n < sizeof(env) - 1; p++) {
            env[n++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
        }
        env[n] = '\0';
        s = getenv(env);
        if (s == NULL) {
            continue;
        }
        if (!parse_int(s, &v) || v < d->min || v > d->max) {
            util_warn("%s=%s: not an integer in [%lld, %lld], ignored", env, s, (long long)d->min,
                      (long long)d->max);
            continue;
        }
        *config_field(&config_cvars, d) = v;
    }
}

int core_config_check(const char *name, int64_t value)
{
    for (size_t i = 0; i < sizeof(config_ints) / sizeof(config_ints[0]); i++) {
        if (strcmp(config_ints[i].name, name) == 0) {
            return value >= config_ints[i].min && value <= config_ints[i].max;
        }
    }
    return 0;
}

int core_config_load(ibmsg_info_t info, core_config_t *cfg)
{
    pthread_once(&config_once, config_from_env);
    *cfg = config_cvars;
    if (info == IBMSG_INFO_NULL) {
        return IBMSG_OK;
    }
    /* Info hints arrive with the info-object implementation of the tool branch. */
    util_error("context hints from an info object are not supported yet");
    return IBMSG_ERR_NOT_SUPPORTED;
}
