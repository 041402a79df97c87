int counter = 3;
int add(int a) { return a + counter; }
