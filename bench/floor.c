/* The CGI floor: the least a CGI program can do. Built by bench/run.sh with
 * gcc -O2 -static; it answers what inclusionConfirmationRequest gets. */
#include <stdio.h>

int main(void)
{
    fputs("Content-Type: text/plain\r\n\r\nconfirmation yes", stdout);
    return 0;
}
