/* Placeholder until this layer has its first source file. */
typedef int core_placeholder_t;
