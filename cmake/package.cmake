# The Debian package (ci/package runs `cpack` on a build tree): what `cmake --install` lays out,
# under /usr, stripped, its library dependencies computed by dpkg-shlibdeps on the system it is
# built on, so a package made on Ubuntu 24.04 or Debian 13 depends on that system's libraries.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cocode)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The cocode authors")
set(CPACK_PACKAGE_CONTACT "cocode maintainers <maintainers@cocode.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "point coding agents at issues and judge what they commit")
set(CPACK_PACKAGE_DESCRIPTION
    "cocode fetches an issue, gives each coding agent (Claude Code, Codex CLI,
Gemini CLI or any program) its own git worktree and branch, runs them side by
side under a supervisor, learns from a post-commit hook the moment an agent
commits with the ready marker, and judges each run: exit code, marker, scope
of the change and the project's own tests. The verdict is posted on the issue,
as a commit status and optionally as a draft pull request.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # cocode_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What it runs besides its libraries: git (the hook's commits, worktrees); bubblewrap only
# where the configuration says `"sandbox": "bwrap"`, or the kernel is older than 5.12 (cocode's
# own libexec/cocode/cocode-sandbox makes the sandbox otherwise); Universal Ctags (the codali
# agent's symbols and imports; without it search still works); python3 only for the example
# agents and the demo.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "git")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ca-certificates, universal-ctags, bubblewrap")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
# The documents Debian's policy asks for, made at build time in share/doc/cocode: copyright,
# the upstream changelog as changelog.gz, the package's changelog.Debian.gz (dated by
# SOURCE_DATE_EPOCH when set, so the package can be reproduced), and lintian's overrides.
set(COCODE_DEB_DOC ${CMAKE_BINARY_DIR}/debian-doc)
configure_file(${PROJECT_SOURCE_DIR}/cmake/copyright.in ${COCODE_DEB_DOC}/copyright @ONLY)
string(TIMESTAMP COCODE_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${PROJECT_SOURCE_DIR}/cmake/changelog.Debian.in ${COCODE_DEB_DOC}/changelog.Debian
               @ONLY)
add_custom_command(OUTPUT ${COCODE_DEB_DOC}/changelog.Debian.gz ${COCODE_DEB_DOC}/changelog.gz
  COMMAND gzip -9nkf ${COCODE_DEB_DOC}/changelog.Debian
  COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/CHANGELOG.md > ${COCODE_DEB_DOC}/changelog.gz
  DEPENDS ${COCODE_DEB_DOC}/changelog.Debian ${PROJECT_SOURCE_DIR}/CHANGELOG.md VERBATIM)
add_custom_target(debian-doc ALL
                  DEPENDS ${COCODE_DEB_DOC}/changelog.Debian.gz ${COCODE_DEB_DOC}/changelog.gz)
install(FILES ${COCODE_DEB_DOC}/copyright ${COCODE_DEB_DOC}/changelog.Debian.gz
              ${COCODE_DEB_DOC}/changelog.gz DESTINATION share/doc/cocode)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/lintian-overrides DESTINATION share/lintian/overrides
        RENAME cocode)
include(CPack)
