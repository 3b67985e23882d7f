/*
 * A plain MPI_T program of the kind tools are made of: enumerate every cvar, pvar and category,
 * call get_info on each (with enums and category members), print one line per item. Run with
 * and without libibmsg-mpit (check_enum.sh compares): everything the MPI library shows alone must
 * still be there, unchanged, with the layer loaded, errors included (Open MPI 4.1 fails get_info
 * on some of its own items: those calls print their error code, which must pass through
 * unchanged). Then every pvar bound to no object gets a handle in one session, all are started
 * with MPI_T_PVAR_ALL_HANDLES, each is read, all are stopped: one line per pvar gives the return
 * codes and the count, which must not change either. Exit status 1 when initialization, counting
 * or the session fails.
 *
 * Usage: mpit_enum [--init]   (--init: MPI_Init_thread first, MPI_T_init_thread after it)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors;

/* Fatal calls: init and counts. */
#define TRY(call)                                               \
    do {                                                        \
        int rc_ = (call);                                       \
        if (rc_ != MPI_SUCCESS) {                               \
            fprintf(stderr, "mpit_enum: %s: %d\n", #call, rc_); \
            errors++;                                           \
        }                                                       \
    } while (0)

/* Calls on one item: an error is part of what the item shows. */
#define SHOW(call)                                      \
    do {                                                \
        int rc_ = (call);                               \
        if (rc_ != MPI_SUCCESS) {                       \
            printf("  error %d from %s\n", rc_, #call); \
        }                                               \
    } while (0)

static void print_enum(MPI_T_enum e)
{
    if (e == MPI_T_ENUM_NULL) {
        return;
    }
    char name[256];
    int len = (int)sizeof(name), num = 0;
    SHOW(MPI_T_enum_get_info(e, &num, name, &len));
    printf("  enum %s %d:", name, num);
    for (int i = 0; i < num; i++) {
        char item[256];
        int ilen = (int)sizeof(item), value;
        SHOW(MPI_T_enum_get_item(e, i, &value, item, &ilen));
        printf(" %s=%d", item, value);
    }
    printf("\n");
}

/* Names are printed, not indices: indices may differ with the layer, names and facts may not. */
static void name_of(int kind, int index, char *buf, int size)
{
    int len = size;
    strcpy(buf, "?");
    if (kind == 0) {
        SHOW(MPI_T_cvar_get_info(index, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    } else if (kind == 1) {
        SHOW(MPI_T_pvar_get_info(index, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                 NULL, NULL));
    } else {
        SHOW(MPI_T_category_get_info(index, buf, &len, NULL, NULL, NULL, NULL, NULL));
    }
}

/*
 * Open MPI 4.1 crashes in its own MPI_T_pvar_handle_alloc on the pvars of the PSM2 MTL when that
 * component is present but not in use (no Omni-Path device): those are skipped, with or without
 * the layer, by name.
 */
static int handle_crashes_mpi(int index)
{
    char name[512];
    name_of(1, index, name, (int)sizeof(name));
    return strncmp(name, "mtl_psm2_", 9) == 0;
}

/* A handle on every pvar bound to no object; start all, read each, stop all. */
static void handles_all(void)
{
    int num = 0;
    MPI_T_pvar_session session;
    TRY(MPI_T_pvar_get_num(&num));
    TRY(MPI_T_pvar_session_create(&session));
    if (errors != 0) {
        return;
    }
    MPI_T_pvar_handle *handles = calloc((size_t)num + 1, sizeof(*handles));
    int *alloc_rc = calloc((size_t)num + 1, sizeof(int));
    int *counts = calloc((size_t)num + 1, sizeof(int));
    for (int i = 0; i < num; i++) {
        int bind = -1;
        alloc_rc[i] = MPI_T_pvar_get_info(i, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bind,
                                          NULL, NULL, NULL);
        if (alloc_rc[i] != MPI_SUCCESS || bind != MPI_T_BIND_NO_OBJECT || handle_crashes_mpi(i)) {
            alloc_rc[i] = -1; /* needs an MPI object: not this program's business */
            continue;
        }
        alloc_rc[i] = MPI_T_pvar_handle_alloc(session, i, NULL, &handles[i], &counts[i]);
    }
    int start_rc = MPI_T_pvar_start(session, MPI_T_PVAR_ALL_HANDLES);
    printf("start all handles: %d\n", start_rc);
    for (int i = 0; i < num; i++) {
        char name[512];
        name_of(1, i, name, (int)sizeof(name));
        if (alloc_rc[i] != MPI_SUCCESS) {
            printf("handle %s alloc=%d\n", name, alloc_rc[i]);
            continue;
        }
        /* 8 bytes is the widest element type MPI_T allows. */
        void *buf = calloc((size_t)counts[i] + 1, 8);
        int read_rc = MPI_T_pvar_read(session, handles[i], buf);
        printf("handle %s alloc=0 count=%d read=%d\n", name, counts[i], read_rc);
        free(buf);
    }
    printf("stop all handles: %d\n", MPI_T_pvar_stop(session, MPI_T_PVAR_ALL_HANDLES));
    TRY(MPI_T_pvar_session_free(&session));
    free(handles);
    free(alloc_rc);
    free(counts);
}

int main(int argc, char **argv)
{
    int provided, num;
    int init = argc > 1 && strcmp(argv[1], "--init") == 0;
    if (init) {
        TRY(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided));
    }
    TRY(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));

    TRY(MPI_T_cvar_get_num(&num));
    printf("cvars %d\n", num);
    for (int i = 0; i < num; i++) {
        char name[512], desc[4096];
        int nlen = (int)sizeof(name), dlen = (int)sizeof(desc), verbosity, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum e;
        int rc =
            MPI_T_cvar_get_info(i, name, &nlen, &verbosity, &dt, &e, desc, &dlen, &bind, &scope);
        if (rc != MPI_SUCCESS) {
            printf("cvar #%d error %d\n", i, rc);
            continue;
        }
        printf("cvar %s verbosity=%d bind=%d scope=%d\n", name, verbosity, bind, scope);
        print_enum(e);
    }
    TRY(MPI_T_pvar_get_num(&num));
    printf("pvars %d\n", num);
    for (int i = 0; i < num; i++) {
        char name[512], desc[4096];
        int nlen = (int)sizeof(name), dlen = (int)sizeof(desc), verbosity, var_class, bind, ro,
            cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum e;
        int rc = MPI_T_pvar_get_info(i, name, &nlen, &verbosity, &var_class, &dt, &e, desc, &dlen,
                                     &bind, &ro, &cont, &atomic);
        if (rc != MPI_SUCCESS) {
            printf("pvar #%d error %d\n", i, rc);
            continue;
        }
        printf("pvar %s verbosity=%d class=%d bind=%d ro=%d cont=%d atomic=%d\n", name, verbosity,
               var_class, bind, ro, cont, atomic);
        print_enum(e);
    }
    TRY(MPI_T_category_get_num(&num));
    printf("categories %d\n", num);
    for (int i = 0; i < num; i++) {
        char name[512], desc[4096];
        int nlen = (int)sizeof(name), dlen = (int)sizeof(desc), ncv, npv, ncat;
        int rc = MPI_T_category_get_info(i, name, &nlen, desc, &dlen, &ncv, &npv, &ncat);
        if (rc != MPI_SUCCESS) {
            printf("category #%d error %d\n", i, rc);
            continue;
        }
        printf("category %s cvars=%d pvars=%d categories=%d\n", name, ncv, npv, ncat);
        int counts[3] = {ncv, npv, ncat};
        for (int kind = 0; kind < 3; kind++) {
            if (counts[kind] == 0) {
                continue;
            }
            int *members = malloc(sizeof(int) * (size_t)counts[kind]);
            if (kind == 0) {
                SHOW(MPI_T_category_get_cvars(i, counts[kind], members));
            } else if (kind == 1) {
                SHOW(MPI_T_category_get_pvars(i, counts[kind], members));
            } else {
                SHOW(MPI_T_category_get_categories(i, counts[kind], members));
            }
            for (int m = 0; m < counts[kind]; m++) {
                char member[512];
                name_of(kind, members[m], member, (int)sizeof(member));
                printf("  member %s\n", member);
            }
            free(members);
        }
    }
    handles_all();
    int stamp;
    TRY(MPI_T_category_changed(&stamp));
    TRY(MPI_T_finalize());
    if (init) {
        MPI_Finalize();
    }
    return errors == 0 ? 0 : 1;
}
