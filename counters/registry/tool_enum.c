/* Enumerations: registration and ibmsg_t_enum_*. Enum handles encode (tag, index + 1). */
#include "counters/registry/tool_internal.h"

#include "util/string_out.h"

#include <stdlib.h>
#include <string.h>

#define TAG_ENUM 0x45

ibmsg_t_enum_t cnt_enum_handle(int index)
{
    return (ibmsg_t_enum_t)(((uintptr_t)TAG_ENUM << 56) | (uintptr_t)(index + 1));
}

const cnt_enum_t *cnt_enum_lookup(ibmsg_t_enum_t enumtype)
{
    uintptr_t v = (uintptr_t)enumtype;
    if ((v >> 56) != TAG_ENUM || (v & 0xffffffffu) == 0) {
        return NULL;
    }
    return cnt_table_get(&cnt_reg.enums, (int)(v & 0xffffffffu) - 1);
}

static void enum_destroy(cnt_enum_t *e)
{
    for (int i = 0; i < e->num_items; i++) {
        free((char *)e->items[i].name);
    }
    free(e->items);
    free(e->name);
    free(e);
}

static int enum_same(const cnt_enum_t *e, int num_items, const cnt_enum_item_t items[])
{
    if (e->num_items != num_items) {
        return 0;
    }
    for (int i = 0; i < num_items; i++) {
        if (e->items[i].value != items[i].value || strcmp(e->items[i].name, items[i].name) != 0) {
            return 0;
        }
    }
    return 1;
}

int cnt_enum_register_locked(const char *name, int num_items, const cnt_enum_item_t items[],
                             ibmsg_t_enum_t *enumtype)
{
    int index, ret;

    if (name == NULL || name[0] == '\0' || num_items < 0 || (num_items > 0 && items == NULL) ||
        enumtype == NULL) {
        return IBMSG_ERR_INVALID;
    }
    for (int i = 0; i < num_items; i++) {
        if (items[i].name == NULL) {
            return IBMSG_ERR_INVALID;
        }
    }
    index = cnt_name_map_find(&cnt_reg.enum_names, name, 0);
    if (index >= 0) {
        if (!enum_same(cnt_table_get(&cnt_reg.enums, index), num_items, items)) {
            return IBMSG_ERR_EXISTS;
        }
        *enumtype = cnt_enum_handle(index);
        return IBMSG_OK;
    }

    cnt_enum_t *e = calloc(1, sizeof(*e));
    if (e == NULL || (e->name = strdup(name)) == NULL ||
        (num_items > 0 && (e->items = calloc((size_t)num_items, sizeof(*e->items))) == NULL)) {
        ret = IBMSG_T_ERR_MEMORY;
        goto err_free_enum;
    }
    for (; e->num_items < num_items; e->num_items++) {
        e->items[e->num_items].value = items[e->num_items].value;
        e->items[e->num_items].name = strdup(items[e->num_items].name);
        if (e->items[e->num_items].name == NULL) {
            ret = IBMSG_T_ERR_MEMORY;
            goto err_free_enum;
        }
    }
    ret = cnt_table_append(&cnt_reg.enums, e, &index);
    if (ret != IBMSG_OK) {
        goto err_free_enum;
    }
    e->index = index;
    /* A failed insert only costs the name lookup; the enum itself is registered. */
    (void)cnt_name_map_insert(&cnt_reg.enum_names, e->name, 0, index);
    *enumtype = cnt_enum_handle(index);
    return IBMSG_OK;

err_free_enum:
    if (e != NULL) {
        enum_destroy(e);
    }
    return ret;
}

int cnt_enum_register(const char *name, int num_items, const cnt_enum_item_t items[],
                      ibmsg_t_enum_t *enumtype)
{
    cnt_tool_ensure_builtins();
    cnt_tool_lock();
    int ret = cnt_enum_register_locked(name, num_items, items, enumtype);
    cnt_tool_unlock();
    return ret;
}

int ibmsg_t_enum_get_info(ibmsg_t_enum_t enumtype, int *num, char *name, int *name_len)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_enum_t *e = cnt_enum_lookup(enumtype);
    if (e == NULL) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    if (num != NULL) {
        *num = e->num_items;
    }
    util_string_out(e->name, name, name_len);
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_enum_get_item(ibmsg_t_enum_t enumtype, int index, int *value, char *name, int *name_len)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_enum_t *e = cnt_enum_lookup(enumtype);
    if (e == NULL) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    if (index < 0 || index >= e->num_items) {
        return IBMSG_T_ERR_INVALID_ITEM;
    }
    if (value != NULL) {
        *value = e->items[index].value;
    }
    util_string_out(e->items[index].name, name, name_len);
    return IBMSG_T_SUCCESS;
}
