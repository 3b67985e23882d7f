/* NIC port discovery under a sysfs root and the pread backend: see nic_port.h. */
#include "counters/nic/nic_port.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ibmsg/status.h>

#include "util/compiler.h"
#include "util/log.h"

/* A counter file holds at most 20 digits and a newline; more means it is not a counter. */
#define CNT_NIC_TEXT_MAX 32

int cnt_nic_parse_value(const char *text, size_t len, uint64_t *value)
{
    uint64_t v = 0;
    size_t i = 0;

    if (len == 0 || text[0] < '0' || text[0] > '9') {
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
        unsigned d = (unsigned)(text[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            return IBMSG_ERR_OUT_OF_RANGE;
        }
        v = v * 10 + d;
    }
    if (i < len && !(text[i] == '\n' && i + 1 == len)) {
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    *value = v;
    return IBMSG_OK;
}

static int cnt_nic_counter_open(ibmsg_t_port_t port, cnt_nic_counter_t *c)
{
    char path[sizeof(port->dir) + CNT_NIC_NAME_MAX + 16];

    snprintf(path, sizeof(path), "%s/%s/%s", port->dir, c->hw ? "hw_counters" : "counters",
             c->name);
    c->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (c->fd < 0) {
        util_warn("nic %s port %d: cannot open %s: %s", port->dev_name, port->port_num, path,
                  strerror(errno));
        return IBMSG_ERR_IO;
    }
    return IBMSG_OK;
}

int cnt_nic_counter_pread(ibmsg_t_port_t port, int i, uint64_t *raw)
{
    cnt_nic_counter_t *c = &port->counters[i];
    char text[CNT_NIC_TEXT_MAX];
    ssize_t n;
    int ret;

    if (c->fd < 0) {
        ret = cnt_nic_counter_open(port, c);
        if (ret != IBMSG_OK) {
            return ret;
        }
    }
    n = pread(c->fd, text, sizeof(text), 0);
    if (n < 0) {
        util_debug("nic %s port %d: reading %s: %s", port->dev_name, port->port_num, c->name,
                   strerror(errno));
        return IBMSG_ERR_IO;
    }
    ret = cnt_nic_parse_value(text, (size_t)n, raw);
    if (ret != IBMSG_OK) {
        util_debug("nic %s port %d: %s does not hold a counter value", port->dev_name,
                   port->port_num, c->name);
    }
    return ret;
}

static int cnt_nic_pread_read(cnt_source_t *src, int n, const int idx[], uint64_t raw[])
{
    ibmsg_t_port_t port = util_container_of(src, struct ibmsg_t_port_s, source);

    for (int i = 0; i < n; i++) {
        int ret = cnt_nic_counter_pread(port, idx[i], &raw[i]);
        if (ret != IBMSG_OK) {
            return ret;
        }
    }
    return IBMSG_OK;
}

static int cnt_nic_pread_snapshot(cnt_source_t *src, uint64_t raw[])
{
    ibmsg_t_port_t port = util_container_of(src, struct ibmsg_t_port_s, source);

    for (int i = 0; i < src->num_counters; i++) {
        int ret = cnt_nic_counter_pread(port, i, &raw[i]);
        if (ret != IBMSG_OK) {
            return ret;
        }
    }
    return IBMSG_OK;
}

static void cnt_nic_pread_cleanup(cnt_source_t *src)
{
    ibmsg_t_port_t port = util_container_of(src, struct ibmsg_t_port_s, source);

    for (int i = 0; i < src->num_counters; i++) {
        if (port->counters[i].fd >= 0) {
            close(port->counters[i].fd);
            port->counters[i].fd = -1;
        }
    }
}

const cnt_source_ops_t cnt_nic_pread_ops = {
    .name = "sysfs-pread",
    .read = cnt_nic_pread_read,
    .snapshot = cnt_nic_pread_snapshot,
    .cleanup = cnt_nic_pread_cleanup,
};

static int cnt_nic_check_index(ibmsg_t_port_t port, int n, const int idx[])
{
    for (int i = 0; i < n; i++) {
        if (idx[i] < 0 || idx[i] >= port->source.num_counters) {
            return IBMSG_ERR_INVALID;
        }
    }
    return IBMSG_OK;
}

int cnt_nic_port_read(ibmsg_t_port_t port, int n, const int idx[], uint64_t totals[])
{
    int ret;

    if (port == NULL || n < 0 || (n > 0 && (idx == NULL || totals == NULL))) {
        return IBMSG_ERR_INVALID;
    }
    ret = cnt_nic_check_index(port, n, idx);
    if (ret != IBMSG_OK) {
        return ret;
    }
    pthread_mutex_lock(&port->lock);
    ret = cnt_source_read(&port->source, n, idx, totals);
    if (ret == IBMSG_OK) {
        for (int i = 0; i < n; i++) {
            totals[i] = cnt_nic_value_update(&port->counters[idx[i]].value, totals[i]);
        }
    }
    pthread_mutex_unlock(&port->lock);
    return ret;
}

int cnt_nic_port_snapshot(ibmsg_t_port_t port, uint64_t totals[])
{
    int ret;

    if (port == NULL || (totals == NULL && port->source.num_counters > 0)) {
        return IBMSG_ERR_INVALID;
    }
    pthread_mutex_lock(&port->lock);
    ret = cnt_source_snapshot(&port->source, totals);
    if (ret == IBMSG_OK) {
        for (int i = 0; i < port->source.num_counters; i++) {
            totals[i] = cnt_nic_value_update(&port->counters[i].value, totals[i]);
        }
    }
    pthread_mutex_unlock(&port->lock);
    return ret;
}

int cnt_nic_port_find(const ibmsg_t_port_t port, bool hw, const char *name)
{
    if (port == NULL || name == NULL) {
        return -1;
    }
    for (int i = 0; i < port->source.num_counters; i++) {
        if (port->counters[i].hw == hw && strcmp(port->counters[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

int cnt_nic_port_saturated(ibmsg_t_port_t port, char *buf, size_t len)
{
    size_t used = 0;
    int num = 0;

    if (buf != NULL && len > 0) {
        buf[0] = '\0';
    }
    pthread_mutex_lock(&port->lock);
    for (int i = 0; i < port->source.num_counters; i++) {
        const cnt_nic_counter_t *c = &port->counters[i];
        if (!c->value.saturated) {
            continue;
        }
        if (buf != NULL && used < len) {
            int w = snprintf(buf + used, len - used, "%s%s%s", num > 0 ? "," : "",
                             c->hw ? "hw_counters/" : "", c->name);
            used += w > 0 ? (size_t)w : 0;
        }
        num++;
    }
    pthread_mutex_unlock(&port->lock);
    return num;
}

int cnt_nic_port_lifespan(ibmsg_t_port_t port, uint64_t *ms)
{
    char path[sizeof(port->dir) + 32];
    char text[CNT_NIC_TEXT_MAX];
    ssize_t n;
    int fd;

    if (!port->has_hw_counters) {
        return IBMSG_ERR_NOT_FOUND;
    }
    /* Read rarely (a SIZE variable): no descriptor kept for it. */
    snprintf(path, sizeof(path), "%s/hw_counters/lifespan", port->dir);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT ? IBMSG_ERR_NOT_FOUND : IBMSG_ERR_IO;
    }
    n = pread(fd, text, sizeof(text), 0);
    close(fd);
    if (n < 0) {
        return IBMSG_ERR_IO;
    }
    return cnt_nic_parse_value(text, (size_t)n, ms);
}

/* ---- discovery ---------------------------------------------------------------------------- */

static bool cnt_nic_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cnt_nic_strcmp_cb(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The entries of a directory other than "." and "..", sorted by name, as a malloc'ed array of
 * malloc'ed strings. A directory that does not exist gives none.
 */
static int cnt_nic_list_dir(const char *path, char ***names, int *num)
{
    DIR *dir = opendir(path);
    struct dirent *de;
    char **list = NULL;
    int n = 0, cap = 0;

    *names = NULL;
    *num = 0;
    if (dir == NULL) {
        return errno == ENOENT || errno == ENOTDIR ? IBMSG_OK : IBMSG_ERR_IO;
    }
    while ((de = readdir(dir)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        if (n == cap) {
            int ncap = cap == 0 ? 32 : 2 * cap;
            char **nl = realloc(list, (size_t)ncap * sizeof(*nl));
            if (nl == NULL) {
                goto err_free;
            }
            list = nl;
            cap = ncap;
        }
        list[n] = strdup(de->d_name);
        if (list[n] == NULL) {
            goto err_free;
        }
        n++;
    }
    closedir(dir);
    if (n > 0) {
        qsort(list, (size_t)n, sizeof(*list), cnt_nic_strcmp_cb);
    }
    *names = list;
    *num = n;
    return IBMSG_OK;

err_free:
    for (int i = 0; i < n; i++) {
        free(list[i]);
    }
    free(list);
    closedir(dir);
    return IBMSG_ERR_NO_MEMORY;
}

static void cnt_nic_free_list(char **names, int num)
{
    for (int i = 0; i < num; i++) {
        free(names[i]);
    }
    free(names);
}

/* Add the regular files of <port->dir>/<sub> as counters (lifespan is a setting, not one). */
static int cnt_nic_port_add_dir(ibmsg_t_port_t port, bool hw, int *cap)
{
    char path[sizeof(port->dir) + 16];
    char file[sizeof(path) + CNT_NIC_NAME_MAX + 2];
    char **names;
    int num, ret;

    snprintf(path, sizeof(path), "%s/%s", port->dir, hw ? "hw_counters" : "counters");
    ret = cnt_nic_list_dir(path, &names, &num);
    if (ret != IBMSG_OK) {
        util_warn("nic %s port %d: cannot list %s", port->dev_name, port->port_num, path);
        return ret;
    }
    if (hw && cnt_nic_is_dir(path)) {
        port->has_hw_counters = true;
    }
    for (int i = 0; i < num; i++) {
        struct stat st;
        cnt_nic_counter_t *c;

        if (hw && strcmp(names[i], "lifespan") == 0) {
            continue;
        }
        if (strlen(names[i]) >= CNT_NIC_NAME_MAX) {
            util_warn("nic %s port %d: counter name %s too long, skipped", port->dev_name,
                      port->port_num, names[i]);
            continue;
        }
        snprintf(file, sizeof(file), "%s/%s", path, names[i]);
        if (stat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
            continue;
        }
        if (port->source.num_counters == *cap) {
            int ncap = *cap == 0 ? 64 : 2 * *cap;
            cnt_nic_counter_t *nc = realloc(port->counters, (size_t)ncap * sizeof(*nc));
            if (nc == NULL) {
                cnt_nic_free_list(names, num);
                return IBMSG_ERR_NO_MEMORY;
            }
            port->counters = nc;
            *cap = ncap;
        }
        c = &port->counters[port->source.num_counters++];
        memset(c, 0, sizeof(*c));
        snprintf(c->name, sizeof(c->name), "%s", names[i]);
        c->hw = hw;
        c->fd = -1;
        cnt_nic_value_init(&c->value, hw, c->name);
    }
    cnt_nic_free_list(names, num);
    return IBMSG_OK;
}

static void cnt_nic_port_destroy(ibmsg_t_port_t port)
{
    if (port->source.ops != NULL && port->source.ops->cleanup != NULL) {
        port->source.ops->cleanup(&port->source);
    }
    pthread_mutex_destroy(&port->lock);
    free(port->counters);
    free(port);
}

static int cnt_nic_port_create(const char *root, const char *dev, int port_num,
                               ibmsg_t_port_t *port_out)
{
    ibmsg_t_port_t port = calloc(1, sizeof(*port));
    int cap = 0, ret;

    if (port == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    snprintf(port->dev_name, sizeof(port->dev_name), "%s", dev);
    port->port_num = port_num;
    snprintf(port->dir, sizeof(port->dir), "%s/%s/ports/%d", root, dev, port_num);
    pthread_mutex_init(&port->lock, NULL);
    port->source.ops = &cnt_nic_pread_ops;
    port->nl_fd = -1;

    ret = cnt_nic_port_add_dir(port, false, &cap);
    if (ret == IBMSG_OK) {
        ret = cnt_nic_port_add_dir(port, true, &cap);
    }
    if (ret != IBMSG_OK) {
        cnt_nic_port_destroy(port);
        return ret;
    }
    util_debug("nic %s port %d: %d counters", dev, port_num, port->source.num_counters);
    *port_out = port;
    return IBMSG_OK;
}

static int cnt_nic_port_num_cmp_cb(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The port numbers under <root>/<dev>/ports, ascending. */
static int cnt_nic_list_ports(const char *root, const char *dev, int **nums, int *num)
{
    char path[4096];
    char **names;
    int n, ret, k = 0;

    *nums = NULL;
    *num = 0;
    snprintf(path, sizeof(path), "%s/%s/ports", root, dev);
    ret = cnt_nic_list_dir(path, &names, &n);
    if (ret != IBMSG_OK || n == 0) {
        return ret;
    }
    *nums = malloc((size_t)n * sizeof(int));
    if (*nums == NULL) {
        cnt_nic_free_list(names, n);
        return IBMSG_ERR_NO_MEMORY;
    }
    for (int i = 0; i < n; i++) {
        char *end;
        long v = strtol(names[i], &end, 10);
        if (*end == '\0' && end != names[i] && v > 0 && v < 256) {
            (*nums)[k++] = (int)v;
        }
    }
    cnt_nic_free_list(names, n);
    qsort(*nums, (size_t)k, sizeof(int), cnt_nic_port_num_cmp_cb);
    *num = k;
    return IBMSG_OK;
}

int cnt_nic_open(const char *root, cnt_nic_t **nic_out)
{
    cnt_nic_t *nic;
    char **devs;
    int num_devs, ret, cap = 0;

    if (nic_out == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (root == NULL || root[0] == '\0') {
        root = CNT_NIC_DEFAULT_ROOT;
    }
    if (strlen(root) > 3000) {
        return IBMSG_ERR_INVALID;
    }
    nic = calloc(1, sizeof(*nic));
    if (nic == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    ret = cnt_nic_list_dir(root, &devs, &num_devs);
    if (ret != IBMSG_OK) {
        util_warn("nic: cannot list %s", root);
        goto err_free_nic;
    }
    for (int d = 0; d < num_devs; d++) {
        int *ports, num_ports;

        if (strlen(devs[d]) >= CNT_NIC_NAME_MAX) {
            continue;
        }
        ret = cnt_nic_list_ports(root, devs[d], &ports, &num_ports);
        if (ret != IBMSG_OK) {
            goto err_free_devs;
        }
        for (int p = 0; p < num_ports; p++) {
            ibmsg_t_port_t port;

            if (nic->num_ports == cap) {
                int ncap = cap == 0 ? 4 : 2 * cap;
                ibmsg_t_port_t *np = realloc(nic->ports, (size_t)ncap * sizeof(*np));
                if (np == NULL) {
                    ret = IBMSG_ERR_NO_MEMORY;
                    free(ports);
                    goto err_free_devs;
                }
                nic->ports = np;
                cap = ncap;
            }
            ret = cnt_nic_port_create(root, devs[d], ports[p], &port);
            if (ret != IBMSG_OK) {
                free(ports);
                goto err_free_devs;
            }
            port->index = nic->num_ports;
            nic->ports[nic->num_ports++] = port;
        }
        free(ports);
    }
    cnt_nic_free_list(devs, num_devs);
    *nic_out = nic;
    return IBMSG_OK;

err_free_devs:
    cnt_nic_free_list(devs, num_devs);
err_free_nic:
    cnt_nic_close(nic);
    return ret;
}

void cnt_nic_close(cnt_nic_t *nic)
{
    if (nic == NULL) {
        return;
    }
    for (int i = 0; i < nic->num_ports; i++) {
        cnt_nic_port_destroy(nic->ports[i]);
    }
    free(nic->ports);
    free(nic);
}
