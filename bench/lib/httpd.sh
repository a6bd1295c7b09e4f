# shellcheck shell=bash
# The main configurations of Debian's lighttpd and apache2 around the repository's
# cgi-bin/ snippets, for one server on 127.0.0.1: the only generator of them, used by the
# tests (tests/common/server.rs runs this file) and by the benchmarks (bench/run.sh and
# bench/resolver.sh source it). The snippet, cgi-bin/<server>/ibi-archive.conf, is
# included unchanged, after its three parameters are defined. The rest mirrors what
# matters here of Debian's stock lighttpd.conf and apache2.conf, including their less
# careful defaults (directory listings on, symbolic links followed), so that the snippet
# must switch them off itself.
#
# Sourced:
#   . bench/lib/httpd.sh
#   lighttpd_config OPTIONS >DIR/lighttpd.conf
#   setsid "$LIGHTTPD_BIN" -D -f DIR/lighttpd.conf </dev/null >>DIR/stdio.log 2>&1 &
#   apache2_config OPTIONS >DIR/apache2.conf
#   setsid "$APACHE2_BIN" -f DIR/apache2.conf -DFOREGROUND </dev/null >>DIR/stdio.log 2>&1 &
#   httpd_modules lighttpd | apache2 [--vhost] [FILE...]
#
# Run, the same with the server's name first:
#   bash bench/lib/httpd.sh lighttpd|apache2 OPTIONS
#   bash bench/lib/httpd.sh modules lighttpd | apache2 [--vhost] [FILE...]
#
# OPTIONS:
#   --dir DIR            the server's own directory (required): it must hold htdocs/ (the
#                        document root) and, for lighttpd, uploads/; the server writes
#                        error.log, <server>.pid and (apache2) cgisock there
#   --port PORT          the port of 127.0.0.1 it listens on (required)
#   --root ROOT          the Archive root,
#   --bin BIN            the executable run as the CGI program,
#   --service-ibi IBI    at /IBI (no leading slash): the snippet's three parameters
#   --vhost CONF         apache2 only, instead of the Archive: CONF included unchanged in
#                        the one <VirtualHost> of the port, without mod_cgid, with the
#                        LogFormats and the server-wide CustomLog
#                        ${APACHE_LOG_DIR}/other_vhosts_access.log of Debian's
#                        apache2.conf (APACHE_LOG_DIR must be in the server's environment)
#   --module FILE        apache2: a module to load too, by its file name in Debian's
#                        module directory (mod_proxy.so); may be repeated
#   --user USER          the user (and group) the server switches to (www-data when run as
#                        root); none by default
#   --threads N          apache2: threads per child process (8); up to 2 children
#   --start-servers N    apache2: children started at once (1)
#   --extra TEXT         lines of configuration added after the snippet (an access log,
#                        say)
#
# httpd_modules prints the loadable modules the configuration loads, one "NAME FILE" line
# each (FILE an absolute path; NAME empty for lighttpd), with --vhost those of a
# <VirtualHost> site, and the FILEs of the --module options: whether the machine has them
# is whether the server is installed as the configuration needs it.
#
# Values are written between double quotes, and paths are read as paths (no globbing): a
# value holding a double quote, a backslash, '$', a glob character (*?[]) or a line break
# is refused.

# shellcheck disable=SC2034 # used by the scripts that source this file
LIGHTTPD_BIN=/usr/sbin/lighttpd
# shellcheck disable=SC2034
APACHE2_BIN=/usr/sbin/apache2
HTTPD_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LIGHTTPD_SNIPPET="$HTTPD_REPO/cgi-bin/lighttpd/ibi-archive.conf"
APACHE2_SNIPPET="$HTTPD_REPO/cgi-bin/apache2/ibi-archive.conf"
LIGHTTPD_MODULE_DIR=/usr/lib/lighttpd
APACHE2_MODULE_DIR=/usr/lib/apache2/modules

_httpd_fail() {
    echo "httpd.sh: $*" >&2
    return 2
}

# Sets the variables of the caller's `local` declarations from OPTIONS.
_httpd_options() {
    while [ $# -gt 0 ]; do
        [ $# -ge 2 ] || { _httpd_fail "$1 needs a value"; return; }
        case "$1" in
            --dir) dir="$2" ;;
            --port) port="$2" ;;
            --root) root="$2" ;;
            --bin) bin="$2" ;;
            --service-ibi) ibi="$2" ;;
            --vhost) vhost="$2" ;;
            --module) modules+=("$2") ;;
            --user) user="$2" ;;
            --threads) threads="$2" ;;
            --start-servers) start_servers="$2" ;;
            --extra) extra="$2" ;;
            *) _httpd_fail "unknown option $1"; return ;;
        esac
        shift 2
    done
    [ -n "$dir" ] || { _httpd_fail "--dir is required"; return; }
    [[ "$port" =~ ^[0-9]+$ ]] || { _httpd_fail "--port takes a number: '$port'"; return; }
    [[ "$threads$start_servers" =~ ^[0-9]+$ ]] \
        || { _httpd_fail "--threads and --start-servers take numbers"; return; }
    if [ -z "$vhost" ]; then
        [ -n "$root" ] && [ -n "$bin" ] && [ -n "$ibi" ] \
            || { _httpd_fail "--root, --bin and --service-ibi are required (or --vhost)"; return; }
        [ "${ibi#/}" = "$ibi" ] \
            || { _httpd_fail "the service IBI is given without a leading slash: $ibi"; return; }
    fi
    local value
    for value in "$dir" "$root" "$bin" "$ibi" "$vhost" "$user"; do
        case "$value" in
            *'"'* | *'\'* | *'$'* | *'*'* | *'?'* | *'['* | *']'* | *$'\n'* | *$'\r'*)
                _httpd_fail "cannot write '$value' into a configuration"; return ;;
        esac
    done
}

httpd_modules() { # lighttpd | apache2 [--vhost [FILE...]]
    case "${1:-}" in
        lighttpd)
            echo " $LIGHTTPD_MODULE_DIR/mod_cgi.so"
            echo " $LIGHTTPD_MODULE_DIR/mod_dirlisting.so"
            ;;
        apache2)
            local vhost="" name so first=2
            if [ "${2:-}" = --vhost ]; then vhost=1; first=3; fi
            # mod_autoindex is loaded only to prove the snippet turns listings off.
            while read -r name so; do
                # A <VirtualHost> site runs no CGI program.
                if [ -n "$vhost" ] && [ "$name" = cgid_module ]; then continue; fi
                echo "$name $APACHE2_MODULE_DIR/$so"
            done <<'MODULES'
mpm_event_module mod_mpm_event.so
authz_core_module mod_authz_core.so
authz_host_module mod_authz_host.so
mime_module mod_mime.so
alias_module mod_alias.so
cgid_module mod_cgid.so
env_module mod_env.so
dir_module mod_dir.so
autoindex_module mod_autoindex.so
MODULES
            for so in "${@:$first}"; do
                # mod_NAME.so is NAME_module.
                name="${so#mod_}"
                name="${name%.so}"
                if [ "mod_$name.so" != "$so" ] || [[ ! "$name" =~ ^[A-Za-z0-9_]+$ ]]; then
                    _httpd_fail "$so is not a module file name such as mod_proxy.so"
                    return
                fi
                echo "${name}_module $APACHE2_MODULE_DIR/$so"
            done
            ;;
        *) _httpd_fail "httpd_modules takes lighttpd or apache2"; return ;;
    esac
}

lighttpd_config() { # OPTIONS
    local dir="" port="" root="" bin="" ibi="" vhost="" user="" threads=8 start_servers=1
    local extra="" modules=()
    _httpd_options "$@" || return
    [ -z "$vhost" ] || { _httpd_fail "--vhost is for apache2 only"; return; }
    [ "${#modules[@]}" -eq 0 ] || { _httpd_fail "--module is for apache2 only"; return; }
    local user_lines=""
    if [ -n "$user" ]; then
        user_lines="server.username = \"$user\""$'\n'"server.groupname = \"$user\""
    fi
    cat <<CONF
# Generated by bench/lib/httpd.sh for one server.
server.document-root = "$dir/htdocs"
server.bind = "127.0.0.1"
server.port = $port
server.errorlog = "$dir/error.log"
server.pid-file = "$dir/lighttpd.pid"
server.upload-dirs = ( "$dir/uploads" )
$user_lines

# As in Debian's lighttpd.conf: these modules first, the snippet's (from
# conf-enabled/) next, mod_dirlisting and mod_staticfile last.
server.modules = ( "mod_indexfile", "mod_access", "mod_alias", "mod_redirect" )
server.http-parseopts = (
    "header-strict"            => "enable",
    "host-strict"              => "enable",
    "host-normalize"           => "enable",
    "url-normalize-unreserved" => "enable",
    "url-normalize-required"   => "enable",
    "url-ctrls-reject"         => "enable",
    "url-path-2f-decode"       => "enable",
    "url-path-dotseg-remove"   => "enable",
)
index-file.names = ( "index.php", "index.html" )
url.access-deny = ( "~", ".inc" )
static-file.exclude-extensions = ( ".php", ".pl", ".fcgi" )
mimetype.assign = ( ".html" => "text/html", ".txt" => "text/plain" )
# Less careful than Debian's defaults on purpose: the snippet must switch
# listings off and stop following symbolic links itself.
dir-listing.activate = "enable"
server.follow-symlink = "enable"

# The snippet's parameters, then the snippet as it is in the repository.
var.ibi_archive_root = "$root"
var.ibi_archive_service_ibi = "$ibi"
var.ibi_archive_bin = "$bin"
include "$LIGHTTPD_SNIPPET"
$extra
server.modules += ( "mod_dirlisting", "mod_staticfile" )
CONF
}

apache2_config() { # OPTIONS
    local dir="" port="" root="" bin="" ibi="" vhost="" user="" threads=8 start_servers=1
    local extra="" modules=()
    _httpd_options "$@" || return
    local load name so
    if [ -z "$vhost" ]; then
        load="$(httpd_modules apache2 "${modules[@]}")" || return
    else
        load="$(httpd_modules apache2 --vhost "${modules[@]}")" || return
    fi
    local types=/etc/mime.types
    if [ ! -f "$types" ]; then
        types="$dir/mime.types"
        : >"$types"
    fi
    cat <<CONF
# Generated by bench/lib/httpd.sh for one server.
ServerRoot "$dir"
DefaultRuntimeDir "$dir"
PidFile "$dir/apache2.pid"
Mutex file:$dir default
ErrorLog "$dir/error.log"
LogLevel warn
ServerName 127.0.0.1
Listen 127.0.0.1:$port
CONF
    if [ -n "$user" ]; then
        printf 'User %s\nGroup %s\n' "$user" "$user"
    fi
    while read -r name so; do
        echo "LoadModule $name $so"
    done <<<"$load"
    if [ -z "$vhost" ]; then
        echo "ScriptSock \"$dir/cgisock\""
    fi
    cat <<CONF
TypesConfig "$types"
StartServers $start_servers
ServerLimit 2
ThreadsPerChild $threads
MaxRequestWorkers $((2 * threads))
MinSpareThreads $threads
MaxSpareThreads $((2 * threads))
Timeout 30
KeepAlive On
KeepAliveTimeout 5
# As in Debian's apache2.conf and mods-available/dir.conf, but with
# listings allowed everywhere: the snippet must switch them off itself.
DirectoryIndex index.html index.cgi index.pl index.php index.xhtml index.htm
<Directory />
    Options Indexes FollowSymLinks
    AllowOverride None
    Require all denied
</Directory>
DocumentRoot "$dir/htdocs"
<Directory "$dir/htdocs">
    Options Indexes FollowSymLinks
    AllowOverride None
    Require all granted
</Directory>
AccessFileName .htaccess
<FilesMatch "^\.ht">
    Require all denied
</FilesMatch>
CONF
    if [ -z "$vhost" ]; then
        cat <<CONF

# The snippet's parameters, then the snippet as it is in the repository.
Define IBI_ARCHIVE_ROOT "$root"
Define IBI_ARCHIVE_SERVICE_IBI "$ibi"
Define IBI_ARCHIVE_BIN "$bin"
Include "$APACHE2_SNIPPET"
CONF
    else
        cat <<'CONF'

# As in Debian's apache2.conf and conf-enabled/other-vhosts-access-log.conf.
LogFormat "%v:%p %h %l %u %t \"%r\" %>s %O \"%{Referer}i\" \"%{User-Agent}i\"" vhost_combined
LogFormat "%h %l %u %t \"%r\" %>s %O \"%{Referer}i\" \"%{User-Agent}i\"" combined
LogFormat "%h %l %u %t \"%r\" %>s %O" common
CustomLog ${APACHE_LOG_DIR}/other_vhosts_access.log vhost_combined
CONF
        cat <<CONF

# A site of its own, which includes the configuration under test unchanged.
<VirtualHost *:$port>
    ServerName 127.0.0.1
    Include "$vhost"
</VirtualHost>
CONF
    fi
    if [ -n "$extra" ]; then
        printf '%s\n' "$extra"
    fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    case "${1:-}" in
        lighttpd) shift; lighttpd_config "$@" ;;
        apache2) shift; apache2_config "$@" ;;
        modules) shift; httpd_modules "$@" ;;
        *)
            echo "usage: bash $0 lighttpd|apache2 OPTIONS | modules lighttpd|apache2 [--vhost] [FILE...]" >&2
            exit 2
            ;;
    esac
fi
