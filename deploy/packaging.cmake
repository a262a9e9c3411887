# SPDX-License-Identifier: Apache-2.0
# The .deb: `cpack -G DEB` in a build directory writes memdiag_<version>_<arch>.deb, whose
# installation plus `systemctl enable --now memdiagd` is the whole set-up on a systemd host.
#
# Only what is installed with COMPONENT memdiag is packaged (CPACK_INSTALL_CMAKE_PROJECTS
# below), so a test program, a helper or a third-party subproject that gains an install rule
# of its own stays out of the package. The destinations are Debian's: these rules are for the
# package, not for `cmake --install` into /usr/local.

# The unit ships as deploy/systemd/memdiagd.service describes it, moved to Debian's paths;
# its header comment, which tells how to install it by hand, is dropped. Configuring again
# when that file changes keeps the packaged copy current.
set(memdiag_unit_source ${CMAKE_SOURCE_DIR}/deploy/systemd/memdiagd.service)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${memdiag_unit_source})
file(READ ${memdiag_unit_source} memdiag_unit)
string(FIND "${memdiag_unit}" "[Unit]" memdiag_unit_start)
if(memdiag_unit_start GREATER 0)
  string(SUBSTRING "${memdiag_unit}" ${memdiag_unit_start} -1 memdiag_unit)
endif()
string(REPLACE /usr/local/bin/memdiagd /usr/bin/memdiagd memdiag_unit "${memdiag_unit}")
string(REGEX REPLACE "\nDocumentation=[^\n]*" "\nDocumentation=man:memdiagd(8) file:///usr/share/doc/memdiag/README.md"
       memdiag_unit "${memdiag_unit}")
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/packaging/memdiagd.service CONTENT
     "# Installed by the memdiag package. Local changes: systemctl edit memdiagd\n${memdiag_unit}")
# dpkg keeps an administrator's edits of a conffile across upgrades instead of overwriting them.
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/packaging/conffiles CONTENT "/etc/memdiag/memdiagd.yaml\n")

install(TARGETS memdiagd RUNTIME DESTINATION bin COMPONENT memdiag)
install(FILES ${CMAKE_BINARY_DIR}/packaging/memdiagd.service DESTINATION /lib/systemd/system COMPONENT memdiag)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/memdiagd.yaml DESTINATION /etc/memdiag COMPONENT memdiag)
file(GLOB memdiag_prometheus_files CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/deploy/prometheus/*.yml)
install(FILES ${memdiag_prometheus_files} DESTINATION share/memdiag/prometheus COMPONENT memdiag)
file(GLOB memdiag_dashboards CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/deploy/grafana/*.json)
install(FILES ${memdiag_dashboards} DESTINATION share/memdiag/grafana COMPONENT memdiag)
# The documentation: the README, docs/ as it is in the repository (its relative links hold),
# the licence (Debian's copyright file, machine-readable) and the changelog, gzipped as Debian
# wants (-n: no name or time stamp, so the package builds the same twice).
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION share/doc/memdiag COMPONENT memdiag)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs DESTINATION share/doc/memdiag COMPONENT memdiag
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png")
install(FILES ${CMAKE_SOURCE_DIR}/deploy/debian/copyright DESTINATION share/doc/memdiag COMPONENT memdiag)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/packaging/changelog.gz
  COMMAND gzip -9n -c ${CMAKE_SOURCE_DIR}/deploy/debian/changelog > ${CMAKE_BINARY_DIR}/packaging/changelog.gz
  DEPENDS ${CMAKE_SOURCE_DIR}/deploy/debian/changelog VERBATIM)
# memdiagd(8), made from the daemon's own --help texts (deploy/man/make-manpage.py).
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/packaging/memdiagd.8.gz
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/deploy/man/make-manpage.py $<TARGET_FILE:memdiagd>
          ${CMAKE_BINARY_DIR}/packaging/memdiagd.8
  COMMAND gzip -9nf ${CMAKE_BINARY_DIR}/packaging/memdiagd.8
  DEPENDS memdiagd ${CMAKE_SOURCE_DIR}/deploy/man/make-manpage.py
  COMMENT "Making memdiagd(8) from its --help" VERBATIM)
add_custom_target(memdiag_package_docs ALL
  DEPENDS ${CMAKE_BINARY_DIR}/packaging/changelog.gz ${CMAKE_BINARY_DIR}/packaging/memdiagd.8.gz)
install(FILES ${CMAKE_BINARY_DIR}/packaging/changelog.gz DESTINATION share/doc/memdiag COMPONENT memdiag)
install(FILES ${CMAKE_BINARY_DIR}/packaging/memdiagd.8.gz DESTINATION share/man/man8 COMPONENT memdiag)

set(CPACK_GENERATOR DEB)
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};memdiag;memdiag;/")
set(CPACK_PACKAGE_NAME memdiag)
set(CPACK_PACKAGE_CONTACT "memdiag maintainers <maintainers@users.noreply.a-seed-3bbdbe4f.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "memory-pressure diagnostics for Prometheus")
# The synopsis line is CPACK_PACKAGE_DESCRIPTION_SUMMARY; this is the text below it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "memdiagd tells why a node's workloads are slow or dying for memory:
reclaim stalls (PSI, vmstat, eBPF reclaim latency), overcommitted promises coming due,
cgroups at their limits and processes running out of mappings. It serves Prometheus metrics
and a diagnosis report; alert rules and Grafana dashboards are in /usr/share/memdiag.")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Depends computed from the binary's shared libraries, as dh_shlibdeps would.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The debug info of a RelWithDebInfo build is most of the binary's size.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_BINARY_DIR}/packaging/conffiles
    ${CMAKE_SOURCE_DIR}/deploy/debian/postinst
    ${CMAKE_SOURCE_DIR}/deploy/debian/prerm
    ${CMAKE_SOURCE_DIR}/deploy/debian/postrm)
# Scripts 0755 and conffiles 0644 whatever their mode in the checkout, as dpkg expects.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
