/* Content Service __NAME__. Load it with <script src="{base}/__FILE__" async></script>.
   On mount it checks {base}/v1/version at most once per 24 h and warns in the console when a newer version exists.
   With data-service-auto-update="on" on the script tag it reloads itself at the new version (off by default). */
(function () {
  var script = document.currentScript
  if (!script) return
  var VERSION = '__VERSION__'
  var base = new URL(script.src, location.href).origin
  var KEY = 'content-service:__COMPONENT__:version-check'
  var DAY = 86400000
  function newer(a, b) {
    var x = a.split('.').map(Number), y = b.split('.').map(Number)
    for (var i = 0; i < 3; i++) { if ((x[i] || 0) !== (y[i] || 0)) return (x[i] || 0) > (y[i] || 0) }
    return false
  }
  function check() {
    try {
      var last = Number(localStorage.getItem(KEY) || 0)
      if (Date.now() - last < DAY) return
      localStorage.setItem(KEY, String(Date.now()))
    } catch (e) { /* storage blocked: check every mount */ }
    fetch(base + '/v1/version', { credentials: 'omit' })
      .then(function (r) { return r.ok ? r.json() : null })
      .then(function (v) {
        var embed = v && v.components && v.components.__COMPONENT__
        if (!embed || !newer(embed.latest, VERSION)) return
        console.warn('[content-service] __FILE__ ' + VERSION + ' is outdated; ' + embed.latest + ' is available' + (embed.changelog ? ': ' + embed.changelog : ''))
        if (script.getAttribute('data-service-auto-update') === 'on' && embed.versioned_url) {
          var s = document.createElement('script')
          s.src = embed.versioned_url
          if (embed.integrity) { s.integrity = embed.integrity; s.crossOrigin = 'anonymous' }
          script.parentNode && script.parentNode.replaceChild(s, script)
        }
      })
      .catch(function () { /* never block a page */ })
  }
  window.ContentService = window.ContentService || {}
  window.ContentService.__GLOBAL__ = { version: VERSION, base: base, api: base + '/v1' }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', check)
  else check()
})()
