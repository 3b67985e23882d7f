/*
 * bench_mpit: the cost of MPI_T_pvar_read through libibmsg-mpit, for one of ibmsg's counters
 * (vs ibmsg_t_pvar_read, the native API) and for one of the MPI library's pvars (vs the MPI
 * library's own PMPI_T_pvar_read, called directly in libmpi, past the layer).
 *
 * Usage: bench_mpit [READS [COUNTER]]   (default 20000000 reads of core_eager_msgs_sent, a
 * counter summed over the threads' shards). Prints ns per read for each path.
 * Built once per MPI variant, linked layer first, then libibmsg and libmpi.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ibmsg/tool.h>

/*
 * This thread's CPU time: on a shared, oversubscribed machine a wall clock also counts the time
 * other processes run; CPU time does not (what preemption leaves behind in the caches is left to
 * the minimum over rounds).
 */
static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef int (*read_fn_t)(void *session, void *handle, void *buf);

/* ns per read of one handle over reads calls. */
static double time_reads(read_fn_t fn, void *session, void *handle, long reads)
{
    unsigned long long buf[16];
    double t0 = now_ns();
    for (long i = 0; i < reads; i++) {
        if (fn(session, handle, buf) != 0) {
            fprintf(stderr, "bench_mpit: read failed\n");
            exit(1);
        }
    }
    return (now_ns() - t0) / (double)reads;
}

/*
 * Path a against path b: BENCH_ROUNDS alternating short rounds, the minimum of each, so that
 * noise from other processes (this runs on shared machines) hits both alike and is filtered out.
 */
#define BENCH_ROUNDS 101
static void compare(read_fn_t fa, void *sa, void *ha, read_fn_t fb, void *sb, void *hb, long reads,
                    double *a, double *b)
{
    *a = *b = 1e30;
    for (int round = 0; round < BENCH_ROUNDS; round++) {
        double ta = time_reads(fa, sa, ha, reads / BENCH_ROUNDS + 1);
        double tb = time_reads(fb, sb, hb, reads / BENCH_ROUNDS + 1);
        *a = ta < *a ? ta : *a;
        *b = tb < *b ? tb : *b;
    }
}

static int layer_read(void *s, void *h, void *buf)
{
    return MPI_T_pvar_read((MPI_T_pvar_session)s, (MPI_T_pvar_handle)h, buf);
}

static int native_read(void *s, void *h, void *buf)
{
    return ibmsg_t_pvar_read((ibmsg_t_pvar_session_t)s, (ibmsg_t_pvar_handle_t)h, buf);
}

static __typeof__(PMPI_T_pvar_read) *mpi_direct_read;

static int mpi_read(void *s, void *h, void *buf)
{
    return mpi_direct_read((MPI_T_pvar_session)s, (MPI_T_pvar_handle)h, buf);
}

/* The first MPI pvar (not ibmsg's) that is unbound and reads at most 16 8-byte elements. */
static int find_mpi_pvar(char *name, int name_size, int *var_class)
{
    int num = 0;
    MPI_T_pvar_get_num(&num);
    for (int i = 0; i < num; i++) {
        int len = name_size, bind, cls;
        MPI_Datatype dt;
        if (MPI_T_pvar_get_info(i, name, &len, NULL, &cls, &dt, NULL, NULL, NULL, &bind, NULL, NULL,
                                NULL) != MPI_SUCCESS ||
            strncmp(name, "ibmsg", 5) == 0 || bind != MPI_T_BIND_NO_OBJECT) {
            continue;
        }
        *var_class = cls;
        return i;
    }
    return -1;
}

int main(int argc, char **argv)
{
    long reads = argc > 1 ? atol(argv[1]) : 20000000L;
    const char *counter = argc > 2 ? argv[2] : "core_eager_msgs_sent";
    char view_name[256];
    int provided, count;

    if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS ||
        ibmsg_t_init_thread(IBMSG_T_THREAD_MULTIPLE, &provided) != IBMSG_OK) {
        fprintf(stderr, "bench_mpit: init failed\n");
        return 1;
    }
    printf(
        "# bench_mpit (%s), %ld reads per path, min of %d alternating rounds, ns of CPU time per "
        "read\n",
        MPIT_BENCH_VARIANT, reads, BENCH_ROUNDS);

    /* ibmsg's counter: through the layer and natively. */
    int view_index, native_index;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    ibmsg_t_pvar_session_t ns;
    ibmsg_t_pvar_handle_t nh;
    snprintf(view_name, sizeof(view_name), "ibmsg_%s", counter);
    if (MPI_T_pvar_get_index(view_name, MPI_T_PVAR_CLASS_COUNTER, &view_index) != MPI_SUCCESS ||
        ibmsg_t_pvar_get_index(counter, IBMSG_T_PVAR_CLASS_COUNTER, &native_index) != IBMSG_OK) {
        fprintf(stderr, "bench_mpit: ibmsg's counter %s not found\n", counter);
        return 1;
    }
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle_alloc(s, view_index, NULL, &h, &count);
    MPI_T_pvar_start(s, h);
    ibmsg_t_pvar_session_create(&ns);
    ibmsg_t_pvar_handle_alloc(ns, native_index, NULL, &nh, &count);
    ibmsg_t_pvar_start(ns, nh);
    double ours_layer, ours_native;
    compare(layer_read, s, h, native_read, ns, nh, reads, &ours_layer, &ours_native);
    printf("ibmsg %-20s via MPI_T layer %6.2f   via ibmsg_t (native) %6.2f   overhead %+.2f\n",
           counter, ours_layer, ours_native, ours_layer - ours_native);

    /* The MPI library's pvar: through the layer and directly in libmpi. */
    char name[256];
    int var_class;
    int mpi_index = find_mpi_pvar(name, (int)sizeof(name), &var_class);
    void *libmpi = dlopen(MPIT_BENCH_MPI_SONAME, RTLD_LAZY | RTLD_NOLOAD);
    if (mpi_index < 0 || libmpi == NULL) {
        printf("MPI pvar: none unbound in this MPI library (%s)\n", MPIT_BENCH_MPI_SONAME);
    } else {
        __typeof__(PMPI_T_pvar_get_index) *mpi_get_index = dlsym(libmpi, "PMPI_T_pvar_get_index");
        __typeof__(PMPI_T_pvar_session_create) *mpi_session_create =
            dlsym(libmpi, "PMPI_T_pvar_session_create");
        __typeof__(PMPI_T_pvar_handle_alloc) *mpi_handle_alloc =
            dlsym(libmpi, "PMPI_T_pvar_handle_alloc");
        mpi_direct_read = dlsym(libmpi, "PMPI_T_pvar_read");
        int direct_index;
        MPI_T_pvar_session ms, ds;
        MPI_T_pvar_handle mh, dh;
        MPI_T_pvar_session_create(&ms);
        MPI_T_pvar_handle_alloc(ms, mpi_index, NULL, &mh, &count);
        mpi_get_index(name, var_class, &direct_index);
        mpi_session_create(&ds);
        mpi_handle_alloc(ds, direct_index, NULL, &dh, &count);
        double theirs_layer, theirs_direct;
        compare(layer_read, ms, mh, mpi_read, ds, dh, reads, &theirs_layer, &theirs_direct);
        printf("MPI %-22s via MPI_T layer %6.2f   MPI library alone    %6.2f   overhead %+.2f\n",
               name, theirs_layer, theirs_direct, theirs_layer - theirs_direct);
    }
    return 0;
}
