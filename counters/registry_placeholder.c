/* Placeholder until this layer has its first source file. */
typedef int registry_placeholder_t;
