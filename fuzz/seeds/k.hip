__attribute__((device)) int dev_fn(int x) { return x + 1; }
__attribute__((device)) int dev_var = 2;
int host_fn(int x) { return x * 2; }
