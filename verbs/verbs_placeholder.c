/* Placeholder until this layer has its first source file. */
typedef int verbs_placeholder_t;
