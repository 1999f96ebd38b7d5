"""Configuration of the bench's private dbus-daemon."""

CONFIG_TEMPLATE = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <!-- A private bus of the system type for relink's bench: never the machine's. -->
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_type="method_return"/>
    <allow send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="signal"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
  </policy>
  <limit name="max_replies_per_connection">4096</limit>
  <!-- BlueZoo (sd-bus) adds a match rule for every object a peripheral
       registers (PropertiesChanged of each service, characteristic,
       descriptor and advertisement, InterfacesRemoved of each application):
       11 per lock. Under the system bus's default of 512 per connection the
       rules of the 47th lock on were refused, and their pushes never reached
       the central (issue 31, restore at N = 64; bench/tests/test_many_locks.py).
       This is the simulator's cost, not the clients': relinkd takes one rule
       for all of org.bluez whatever the number of links (BlueZClient). -->
  <limit name="max_match_rules_per_connection">65536</limit>
  <!-- Activation files tests write (relaunch, docs/relaunch.md): DIR/services. -->
  <servicedir>{services}</servicedir>
</busconfig>
"""


def render(socket_path: str, services: str) -> str:
    return CONFIG_TEMPLATE.format(socket=socket_path, services=services)
